import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cadenceOf } from "../../src/scheduler/cadence.ts";
import { canonicalTimeZone, nextCronTime, parseCron } from "../../src/scheduler/cron.ts";
import { isAppError } from "../../src/util/errors.ts";

// Cron parsing and next times (croner): in local time (dates below are built with the local-time Date constructor,
// so the expectations hold in any time zone) and in a schedule's own IANA zone across daylight saving changes,
// and the cadence of intervals and crons after a late tick.

/** A local time: month 1-12. */
const at = (y: number, mo: number, d: number, h = 0, mi = 0) => new Date(y, mo - 1, d, h, mi).getTime();
const next = (expression: string, after: number) => nextCronTime(parseCron(expression), after);
const local = (ms: number) => {
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
};

describe("next cron time", () => {
  it("steps, and strictly after the given time", () => {
    expect(local(next("*/15 * * * *", at(2025, 3, 10, 10, 7)))).toBe("2025-03-10 10:15");
    expect(local(next("*/15 * * * *", at(2025, 3, 10, 10, 15)))).toBe("2025-03-10 10:30");
    expect(local(next("*/15 * * * *", at(2025, 3, 10, 23, 50)))).toBe("2025-03-11 00:00");
    expect(local(next("5/20 * * * *", at(2025, 3, 10, 10, 30)))).toBe("2025-03-10 10:45");
    // Seconds are dropped: 10:07:30 is after 10:07, so the next whole minute counts.
    expect(local(next("* * * * *", at(2025, 3, 10, 10, 7) + 30_000))).toBe("2025-03-10 10:08");
  });

  it("ranges with steps and day names (a weekend is skipped)", () => {
    // 2025-01-04 is a Saturday.
    expect(local(next("0 9-17/4 * * mon-fri", at(2025, 1, 4, 10)))).toBe("2025-01-06 09:00");
    expect(local(next("0 9-17/4 * * mon-fri", at(2025, 1, 6, 9)))).toBe("2025-01-06 13:00");
    expect(local(next("0 9-17/4 * * mon-fri", at(2025, 1, 6, 17)))).toBe("2025-01-07 09:00");
    expect(local(next("0 0 * * 7", at(2025, 1, 1)))).toBe("2025-01-05 00:00"); // 7 is Sunday too
    expect(local(next("0 0 * * SUN", at(2025, 1, 1)))).toBe("2025-01-05 00:00");
  });

  it("lists and month names", () => {
    expect(local(next("30 8 1,15 * *", at(2025, 1, 15, 9)))).toBe("2025-02-01 08:30");
    expect(local(next("0 12 1 jan,jul *", at(2025, 1, 2)))).toBe("2025-07-01 12:00");
    expect(local(next("0,30 6,18 * * *", at(2025, 1, 2, 6, 30)))).toBe("2025-01-02 18:00");
    expect(local(next("0 0 1 1 *", at(2025, 6, 1)))).toBe("2026-01-01 00:00");
  });

  it("month ends: the 31st skips short months, Feb 29 waits for a leap year", () => {
    expect(local(next("0 0 31 * *", at(2025, 1, 31)))).toBe("2025-03-31 00:00");
    expect(local(next("0 0 31 * *", at(2025, 4, 1)))).toBe("2025-05-31 00:00");
    expect(local(next("0 0 30 * *", at(2025, 1, 30, 1)))).toBe("2025-03-30 00:00");
    expect(local(next("0 12 29 feb *", at(2025, 3, 1)))).toBe("2028-02-29 12:00");
    expect(local(next("59 23 28-31 * *", at(2025, 2, 28, 23, 59)))).toBe("2025-03-28 23:59");
  });

  it("day-of-month and day-of-week both restricted: either matches (Vixie cron)", () => {
    // 2025-01-03 is a Friday, the 13th a Monday.
    const spec = parseCron("0 0 13 * fri");
    const first = nextCronTime(spec, at(2025, 1, 1));
    const second = nextCronTime(spec, first);
    const third = nextCronTime(spec, second);
    expect([first, second, third].map(local)).toEqual(["2025-01-03 00:00", "2025-01-10 00:00", "2025-01-13 00:00"]);
  });
});

describe("daylight saving time in the daemon's local zone (TZ=America/New_York)", () => {
  const saved = process.env.TZ;
  beforeAll(() => {
    process.env.TZ = "America/New_York";
  });
  afterAll(() => {
    if (saved === undefined) delete process.env.TZ;
    else process.env.TZ = saved;
  });

  it("a fixed time that does not exist that day runs right after the gap; an hourly one skips it", () => {
    // 2025-03-09: clocks go from 02:00 to 03:00. Vixie cron (and croner) run a daily 02:30 at 03:00 that day
    // rather than losing the day's run.
    const first = next("30 2 * * *", at(2025, 3, 9));
    expect(local(first)).toBe("2025-03-09 03:00");
    expect(local(next("30 2 * * *", first))).toBe("2025-03-10 02:30");
    expect(next("0 * * * *", at(2025, 3, 9, 1)) - at(2025, 3, 9, 1)).toBe(3_600_000);
  });

  it("a repeated hour runs once", () => {
    // 2025-11-02: 01:00 to 01:59 happens twice; the next 01:30 after the first is the next day's, 25 h later.
    const first = next("30 1 * * *", at(2025, 11, 2));
    expect(local(first)).toBe("2025-11-02 01:30");
    expect(next("30 1 * * *", first) - first).toBe(25 * 3_600_000);
  });
});

describe("a schedule's own time zone (Europe/Paris), whatever the daemon's zone", () => {
  /** The next runs after an instant (UTC ISO), as UTC ISO strings. */
  const runs = (expression: string, fromIso: string, count: number, timeZone = "Europe/Paris") => {
    const cron = parseCron(expression, timeZone);
    const out: string[] = [];
    let after = Date.parse(fromIso);
    for (let i = 0; i < count; i++) {
      after = nextCronTime(cron, after);
      out.push(new Date(after).toISOString());
    }
    return out;
  };

  it("winter and summer offsets: 09:00 Paris is 08:00 UTC in January, 07:00 UTC in July", () => {
    expect(runs("0 9 * * *", "2025-01-10T12:00:00Z", 1)).toEqual(["2025-01-11T08:00:00.000Z"]);
    expect(runs("0 9 * * *", "2025-07-10T12:00:00Z", 1)).toEqual(["2025-07-11T07:00:00.000Z"]);
    expect(runs("0 9 * * *", "2025-07-10T12:00:00Z", 1, "Asia/Tokyo")).toEqual(["2025-07-11T00:00:00.000Z"]);
  });

  it("last Sunday of March (02:00 -> 03:00): a daily 02:30 runs at 03:00 that day, a daily 01:30 is unmoved", () => {
    expect(runs("30 2 * * *", "2025-03-29T00:00:00Z", 3)).toEqual([
      "2025-03-29T01:30:00.000Z", // 02:30 CET
      "2025-03-30T01:00:00.000Z", // 03:00 CEST: 02:30 does not exist
      "2025-03-31T00:30:00.000Z", // 02:30 CEST
    ]);
    expect(runs("30 1 * * *", "2025-03-29T00:00:00Z", 3)).toEqual([
      "2025-03-29T00:30:00.000Z", // 01:30 CET
      "2025-03-30T00:30:00.000Z", // 01:30 CET, just before the change
      "2025-03-30T23:30:00.000Z", // 01:30 CEST
    ]);
    // An interval-like expression skips the hour that does not exist: 01:00 CET, then 03:00 CEST.
    expect(runs("0 * * * *", "2025-03-30T00:30:00Z", 2)).toEqual([
      "2025-03-30T01:00:00.000Z",
      "2025-03-30T02:00:00.000Z",
    ]);
  });

  it("last Sunday of October (03:00 -> 02:00): a daily 02:30 runs once, a step runs on both passes", () => {
    expect(runs("30 2 * * *", "2025-10-25T00:00:00Z", 3)).toEqual([
      "2025-10-25T00:30:00.000Z", // 02:30 CEST
      "2025-10-26T00:30:00.000Z", // 02:30 CEST, the first of the two 02:30s; the second (01:30 UTC) is skipped
      "2025-10-27T01:30:00.000Z", // 02:30 CET
    ]);
    // A list without wildcards is a set of fixed times too (as in Vixie cron): once in the repeated hour.
    expect(runs("30 2,14 * * *", "2025-10-25T23:00:00Z", 2)).toEqual([
      "2025-10-26T00:30:00.000Z",
      "2025-10-26T13:30:00.000Z",
    ]);
    // Every 30 minutes of 02:xx: 02:00 and 02:30 come twice in real time, and each occurrence runs.
    expect(runs("*/30 2 * * *", "2025-10-25T23:00:00Z", 5)).toEqual([
      "2025-10-26T00:00:00.000Z",
      "2025-10-26T00:30:00.000Z",
      "2025-10-26T01:00:00.000Z",
      "2025-10-26T01:30:00.000Z",
      "2025-10-27T01:00:00.000Z",
    ]);
  });

  it("the cadence of a zoned schedule counts missed windows across the change", () => {
    const cadence = cadenceOf({ interval_secs: null, cron: "30 2 * * *", timezone: "Europe/Paris" });
    const due = Date.parse("2025-03-29T01:30:00Z");
    expect(cadence.advance(due, Date.parse("2025-03-31T12:00:00Z"))).toEqual({
      next: Date.parse("2025-04-01T00:30:00Z"),
      missed: 2,
    });
  });
});

describe("time zone names", () => {
  it("IANA names are accepted and spelled canonically; offsets, abbreviations unknown to the runtime and junk are not", () => {
    expect(canonicalTimeZone("Europe/Paris")).toBe("Europe/Paris");
    expect(canonicalTimeZone("europe/paris")).toBe("Europe/Paris");
    expect(canonicalTimeZone("UTC")).toBe("UTC");
    expect(canonicalTimeZone("America/Argentina/Buenos_Aires")).toBeDefined();
    for (const bad of ["Mars/Olympus", "+01:00", "Europe/Paris ", "", "../etc/passwd", "x".repeat(65)]) {
      expect(canonicalTimeZone(bad), bad).toBeUndefined();
    }
  });
});

describe("bad cron expressions", () => {
  const cases: Array<[string, string]> = [
    ["* * * *", "has 4 fields"],
    ["* * * * * *", "has 6 fields"],
    ["", "1 to 200 characters"],
    ["60 * * * *", "minute 60 is out of range 0-59"],
    ["* 24 * * *", "hour 24 is out of range 0-23"],
    ["* * 0 * *", "day-of-month 0 is out of range 1-31"],
    ["* * * 13 *", "month 13 is out of range 1-12"],
    ["* * * * 8", "day-of-week 8 is out of range 0-7"],
    ["0 9 * * mon-fri#9", "day-of-week field"],
    ["*/0 * * * *", 'minute field "*/0" is not valid: a value, list (a,b), range (a-b) or step'],
    ["5-1 * * * *", 'minute field "5-1" is not valid'],
    [
      "* * * foo *",
      'month field "foo" is not valid: a value, list (a,b), range (a-b) or step (*/n, a-b/n, a/n) of 1-12',
    ],
    ["* * * * mon-", 'day-of-week field "mon-" is not valid'],
    ["1,,2 * * * *", 'minute field "1,,2" is not valid'],
    ["@reboot", "unknown nickname: use @yearly"],
    ["0 0 31 2 *", "would never run"],
    ["0 0 31 feb,apr,jun,sep,nov *", "would never run"],
  ];
  for (const [expression, message] of cases) {
    it(`refuses "${expression}"`, () => {
      let caught: unknown;
      try {
        parseCron(expression);
      } catch (error) {
        caught = error;
      }
      expect(isAppError(caught)).toBe(true);
      expect((caught as Error).message).toContain(message);
      expect(caught).toMatchObject({ code: "invalid_request", details: { field: "cron" } });
    });
  }

  it("accepts a restricted day of month when a day of week is restricted too (either matches)", () => {
    expect(() => parseCron("0 0 31 2 mon")).not.toThrow();
  });

  it("accepts croner's extensions: nicknames, last day, n-th weekday", () => {
    expect(local(next("@daily", at(2025, 1, 1, 10)))).toBe("2025-01-02 00:00");
    expect(local(next("0 18 L * *", at(2025, 2, 1)))).toBe("2025-02-28 18:00");
    expect(local(next("0 9 * * mon#1", at(2025, 1, 10)))).toBe("2025-02-03 09:00");
  });
});

describe("cadence after a late tick", () => {
  it("interval: next window strictly after now on the original cadence, windows in between missed", () => {
    const cadence = cadenceOf({ interval_secs: 60, cron: null, timezone: null });
    expect(cadence.first(1_000)).toBe(61_000);
    expect(cadence.advance(61_000, 61_000)).toEqual({ next: 121_000, missed: 0 });
    expect(cadence.advance(61_000, 120_999)).toEqual({ next: 121_000, missed: 0 });
    expect(cadence.advance(61_000, 121_000)).toEqual({ next: 181_000, missed: 1 });
    expect(cadence.advance(61_000, 61_000 + 5 * 60_000 + 30_000)).toEqual({ next: 61_000 + 6 * 60_000, missed: 5 });
  });

  it("cron: counts the matching times that passed", () => {
    const cadence = cadenceOf({ interval_secs: null, cron: "0 * * * *", timezone: null });
    const due = at(2025, 3, 10, 10);
    expect(cadence.first(at(2025, 3, 10, 9, 30))).toBe(due);
    expect(cadence.advance(due, due)).toEqual({ next: at(2025, 3, 10, 11), missed: 0 });
    expect(cadence.advance(due, at(2025, 3, 10, 13, 30))).toEqual({ next: at(2025, 3, 10, 14), missed: 3 });
  });
});
