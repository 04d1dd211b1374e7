import { Cron, type CronOptions } from "croner";
import { AppError } from "../util/errors.ts";

// Cron expressions, evaluated by croner in a schedule's IANA time zone (the daemon's local zone when it has
// none). Five fields (minute hour day-of-month month day-of-week) with croner's extensions (L, W, #, @daily...).
// Daylight saving follows Vixie cron: a time without wildcards or steps (`30 2 * * *`, `0 8,18 * * *`) runs once
// when it repeats and right after the gap when it is skipped; a wildcard or step runs on every real occurrence.

export const MAX_CRON_CHARS = 200;
/** Longer than any IANA zone name. */
export const MAX_TIME_ZONE_CHARS = 64;

const OPTIONS: CronOptions = { mode: "5-part", sloppyRanges: true, fixedTimeRule: "no-wildcard" };
const FIELD_NAMES = "minute hour day-of-month month day-of-week, for example `*/15 9-17 * * mon-fri`";
const FORMAT = `expected 5 fields: ${FIELD_NAMES}`;
const FORMS = "a value, list (a,b), range (a-b) or step (*/n, a-b/n, a/n)";
const FIELDS = [
  { name: "minute", min: 0, max: 59, values: "0-59" },
  { name: "hour", min: 0, max: 23, values: "0-23" },
  { name: "day-of-month", min: 1, max: 31, values: "1-31, L (last) or nW (nearest weekday)" },
  { name: "month", min: 1, max: 12, values: "1-12 or jan-dec" },
  { name: "day-of-week", min: 0, max: 7, values: "0-7 or sun-sat (0 and 7 are Sunday), d#n (n-th) or dL (last)" },
] as const;

function invalid(expression: string, reason: string): AppError {
  return new AppError("invalid_request", `cron "${expression}": ${reason}`, { field: "cron" });
}

/**
 * Parses a cron expression for a time zone (validated by the caller; undefined is local time). A bad one is an
 * `invalid_request` naming the field and what is wrong, as is one that can never run (`0 0 31 2 *`).
 */
export function parseCron(expression: string, timeZone?: string | null): Cron {
  const text = expression.trim();
  if (text.length === 0 || text.length > MAX_CRON_CHARS) {
    throw invalid(expression, `must be 1 to ${MAX_CRON_CHARS} characters; ${FORMAT}`);
  }
  const parts = text.split(/\s+/);
  // Nicknames (@daily) are one word; anything else has exactly the 5 fields (no seconds or years).
  if (!text.startsWith("@") && parts.length !== 5) throw invalid(expression, `has ${parts.length} fields; ${FORMAT}`);
  let cron: Cron;
  try {
    cron = new Cron(text, { ...OPTIONS, ...(timeZone ? { timezone: timeZone } : {}) });
  } catch (error) {
    throw invalid(expression, explain(parts, error));
  }
  if (cron.nextRun() === null)
    throw invalid(expression, "names days that none of its months has, so it would never run");
  return cron;
}

/** Which field croner refused (each is checked alone) and what it may hold; croner's own words otherwise. */
function explain(parts: string[], error: unknown): string {
  if (parts.length === 5) {
    for (const [i, field] of FIELDS.entries()) {
      const alone = FIELDS.map((_, j) => (j === i ? parts[i] : "*")).join(" ");
      try {
        new Cron(alone, OPTIONS);
        continue;
      } catch {}
      const text = parts[i]!;
      // A value out of range is the usual mistake: say which (step sizes and n-th counts are not values).
      const outside = text
        .match(/(?<![/#\d])\d+/g)
        ?.map(Number)
        .find((n) => n < field.min || n > field.max);
      if (outside !== undefined) return `${field.name} ${outside} is out of range ${field.min}-${field.max}`;
      return `${field.name} field "${text}" is not valid: ${FORMS} of ${field.values}`;
    }
  }
  if (parts[0]!.startsWith("@")) {
    return `unknown nickname: use @yearly, @monthly, @weekly, @daily or @hourly, or 5 fields (${FIELD_NAMES})`;
  }
  return (error as Error).message.replace(/^CronPattern: /, "");
}

/** The first whole minute strictly after `afterMs` that the expression matches (ms). */
export function nextCronTime(cron: Cron, afterMs: number): number {
  const next = cron.nextRun(new Date(afterMs));
  if (next === null) throw new AppError("internal", "no time matches this cron expression within the search window");
  return next.getTime();
}

/**
 * The canonical IANA name of a time zone (`europe/paris` is `Europe/Paris`), or undefined when the runtime does
 * not know it. UTC offsets (`+01:00`) are refused: they have no daylight saving rules.
 */
export function canonicalTimeZone(name: string): string | undefined {
  if (name.length > MAX_TIME_ZONE_CHARS || !/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(name)) return undefined;
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}
