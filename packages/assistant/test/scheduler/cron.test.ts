import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cadenceOf } from "../../src/scheduler/cadence.ts";
import { nextCronTime, parseCron } from "../../src/scheduler/cron.ts";
import { isAppError } from "../../src/util/errors.ts";

// Cron parsing and next-time search in local time (dates below are built with the local-time Date constructor,
// so the expectations hold in any time zone), and the cadence of intervals and crons after a late tick.

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

describe("daylight saving time (America/New_York)", () => {
  const saved = process.env.TZ;
  beforeAll(() => {
    process.env.TZ = "America/New_York";
  });
  afterAll(() => {
    if (saved === undefined) delete process.env.TZ;
    else process.env.TZ = saved;
  });

  it("a time that does not exist that day is skipped", () => {
    // 2025-03-09: clocks go from 02:00 to 03:00.
    expect(local(next("30 2 * * *", at(2025, 3, 9)))).toBe("2025-03-10 02:30");
    expect(next("0 * * * *", at(2025, 3, 9, 1)) - at(2025, 3, 9, 1)).toBe(3_600_000);
  });

  it("a repeated hour runs once", () => {
    // 2025-11-02: 01:00 to 01:59 happens twice; the next 01:30 after the first is the next day's, 25 h later.
    const first = next("30 1 * * *", at(2025, 11, 2));
    expect(local(first)).toBe("2025-11-02 01:30");
    expect(next("30 1 * * *", first) - first).toBe(25 * 3_600_000);
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
    ["*/0 * * * *", "the step must be 1 or more"],
    ["5-1 * * * *", 'range "5-1" goes backwards'],
    ["* * * foo *", 'month "foo" is not a number or a name'],
    ["* * * * mon-", "is not a value, range, list or step"],
    ["1,,2 * * * *", "is not a value, range, list or step"],
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
});

describe("cadence after a late tick", () => {
  it("interval: next window strictly after now on the original cadence, windows in between missed", () => {
    const cadence = cadenceOf({ interval_secs: 60, cron: null });
    expect(cadence.first(1_000)).toBe(61_000);
    expect(cadence.advance(61_000, 61_000)).toEqual({ next: 121_000, missed: 0 });
    expect(cadence.advance(61_000, 120_999)).toEqual({ next: 121_000, missed: 0 });
    expect(cadence.advance(61_000, 121_000)).toEqual({ next: 181_000, missed: 1 });
    expect(cadence.advance(61_000, 61_000 + 5 * 60_000 + 30_000)).toEqual({ next: 61_000 + 6 * 60_000, missed: 5 });
  });

  it("cron: counts the matching times that passed", () => {
    const cadence = cadenceOf({ interval_secs: null, cron: "0 * * * *" });
    const due = at(2025, 3, 10, 10);
    expect(cadence.first(at(2025, 3, 10, 9, 30))).toBe(due);
    expect(cadence.advance(due, due)).toEqual({ next: at(2025, 3, 10, 11), missed: 0 });
    expect(cadence.advance(due, at(2025, 3, 10, 13, 30))).toEqual({ next: at(2025, 3, 10, 14), missed: 3 });
  });
});
