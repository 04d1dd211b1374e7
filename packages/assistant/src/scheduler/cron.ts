import { AppError } from "../util/errors.ts";

// Standard 5-field cron (minute hour day-of-month month day-of-week) with `*`, lists, ranges, steps and 3-letter
// month and day names, evaluated in the daemon's local time zone. As in Vixie cron, when both day fields are
// restricted a day matching either one matches; when one starts with `*` only the other one counts.

export const MAX_CRON_CHARS = 200;

export interface CronSpec {
  minutes: ReadonlySet<number>;
  hours: ReadonlySet<number>;
  days: ReadonlySet<number>;
  months: ReadonlySet<number>;
  /** 0 = Sunday (7 is accepted and stored as 0). */
  weekdays: ReadonlySet<number>;
  /** Whether the day-of-month / day-of-week field starts with `*`. */
  anyDay: boolean;
  anyWeekday: boolean;
}

interface Field {
  name: string;
  min: number;
  max: number;
  names?: readonly string[];
}

const FIELDS: readonly Field[] = [
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day-of-month", min: 1, max: 31 },
  {
    name: "month",
    min: 1,
    max: 12,
    names: ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"],
  },
  { name: "day-of-week", min: 0, max: 7, names: ["sun", "mon", "tue", "wed", "thu", "fri", "sat"] },
];

const FORMAT = "expected 5 fields: minute hour day-of-month month day-of-week, for example `*/15 9-17 * * mon-fri`";
/** Days in each month at most (February of a leap year). */
const MONTH_DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
/** Steps of the search for the next time; the longest real gap (a leap day on a weekday...) is far below it. */
const MAX_STEPS = 100_000;

function invalid(expression: string, reason: string): AppError {
  return new AppError("invalid_request", `cron "${expression}": ${reason}`, { field: "cron" });
}

/** Parses a cron expression; a bad one is an `invalid_request` naming the field and what is wrong. */
export function parseCron(expression: string): CronSpec {
  const text = expression.trim();
  if (text.length === 0 || text.length > MAX_CRON_CHARS) {
    throw invalid(expression, `must be 1 to ${MAX_CRON_CHARS} characters; ${FORMAT}`);
  }
  const parts = text.split(/\s+/);
  if (parts.length !== 5) throw invalid(expression, `has ${parts.length} fields; ${FORMAT}`);
  const [minutes, hours, days, months, weekdays] = parts.map((part, i) => parseField(expression, part, FIELDS[i]!));
  const spec: CronSpec = {
    minutes: minutes!,
    hours: hours!,
    days: days!,
    months: months!,
    weekdays: new Set([...weekdays!].map((d) => d % 7)),
    anyDay: parts[2]!.startsWith("*"),
    anyWeekday: parts[4]!.startsWith("*"),
  };
  // Only a day-of-month restriction can name days no chosen month has (`0 0 31 2 *`): it would never run.
  if (spec.anyWeekday && !spec.anyDay) {
    const possible = [...spec.months].some((m) => [...spec.days].some((d) => d <= MONTH_DAYS[m - 1]!));
    if (!possible) throw invalid(expression, "names days that none of its months has, so it would never run");
  }
  return spec;
}

function parseField(expression: string, text: string, field: Field): Set<number> {
  const values = new Set<number>();
  for (const item of text.split(",")) {
    const match = /^(\*|[a-z0-9]+(?:-[a-z0-9]+)?)(?:\/(\d+))?$/i.exec(item);
    if (!match) throw invalid(expression, `${field.name} field "${text}" is not a value, range, list or step`);
    const [, range, stepText] = match;
    const step = stepText === undefined ? 1 : Number(stepText);
    if (!Number.isSafeInteger(step) || step < 1) {
      throw invalid(expression, `${field.name} field "${text}": the step must be 1 or more`);
    }
    let from = field.min;
    let to = field.max;
    if (range !== "*") {
      const [first, last] = range!.split("-");
      from = fieldValue(expression, first!, field);
      // `5/10` means from 5 to the end in steps of 10, as in Vixie cron.
      to = last !== undefined ? fieldValue(expression, last, field) : stepText !== undefined ? field.max : from;
      if (from > to) throw invalid(expression, `${field.name} range "${item}" goes backwards`);
    } else if (field.name === "day-of-week") to = 6; // `*` is Sunday to Saturday once
    for (let value = from; value <= to; value += step) values.add(value);
  }
  return values;
}

function fieldValue(expression: string, text: string, field: Field): number {
  const named = field.names?.indexOf(text.toLowerCase()) ?? -1;
  if (named >= 0) return named + (field.name === "month" ? 1 : 0);
  if (!/^\d+$/.test(text)) {
    const names = field.names ? ` or a name (${field.names.join(", ")})` : "";
    throw invalid(expression, `${field.name} "${text}" is not a number${names}`);
  }
  const value = Number(text);
  if (value < field.min || value > field.max) {
    throw invalid(expression, `${field.name} ${value} is out of range ${field.min}-${field.max}`);
  }
  return value;
}

function dayMatches(spec: CronSpec, date: Date): boolean {
  const day = spec.days.has(date.getDate());
  const weekday = spec.weekdays.has(date.getDay());
  if (spec.anyDay || spec.anyWeekday) return day && weekday;
  return day || weekday;
}

/** The first whole minute strictly after `afterMs` that the expression matches, in local time (ms). */
export function nextCronTime(spec: CronSpec, afterMs: number): number {
  const date = new Date(afterMs);
  date.setSeconds(0, 0);
  date.setMinutes(date.getMinutes() + 1);
  // Each step jumps to the start of the next month, day, hour or minute, so local-time gaps (a DST change)
  // are stepped over rather than matched.
  for (let step = 0; step < MAX_STEPS; step++) {
    if (!spec.months.has(date.getMonth() + 1)) {
      date.setMonth(date.getMonth() + 1, 1);
      date.setHours(0, 0, 0, 0);
    } else if (!dayMatches(spec, date)) {
      date.setDate(date.getDate() + 1);
      date.setHours(0, 0, 0, 0);
    } else if (!spec.hours.has(date.getHours())) {
      date.setHours(date.getHours() + 1, 0, 0, 0);
    } else if (!spec.minutes.has(date.getMinutes())) {
      date.setMinutes(date.getMinutes() + 1, 0, 0);
    } else {
      return date.getTime();
    }
  }
  throw new AppError("internal", "no time matches this cron expression within the search window");
}
