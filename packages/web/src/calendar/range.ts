import type { CalendarItem } from "@assistant/client";

// The calendar's dates in the page's local time: the range a view shows (weeks start on Monday), a step
// backward or forward, and the entries grouped by local day.

export type CalendarView = "month" | "week" | "list";

export interface Range {
  /** Local midnight of the first day shown. */
  start: Date;
  /** Local midnight after the last day shown (exclusive). */
  end: Date;
}

export function startOfDay(date: Date): Date {
  return new Date(date.getFullYear(), date.getMonth(), date.getDate());
}

export function addDays(date: Date, days: number): Date {
  return new Date(date.getFullYear(), date.getMonth(), date.getDate() + days);
}

function startOfWeek(date: Date): Date {
  return addDays(startOfDay(date), -((date.getDay() + 6) % 7));
}

/** Month and list: the weeks that hold the month (at most 6, 42 days); week: Monday to Sunday. */
export function rangeOf(view: CalendarView, anchor: Date): Range {
  if (view === "week") {
    const start = startOfWeek(anchor);
    return { start, end: addDays(start, 7) };
  }
  const first = new Date(anchor.getFullYear(), anchor.getMonth(), 1);
  const next = new Date(anchor.getFullYear(), anchor.getMonth() + 1, 1);
  if (view === "list") return { start: first, end: next };
  const start = startOfWeek(first);
  const weeks = Math.ceil((next.getTime() - start.getTime()) / (7 * 86_400_000) - 1e-9);
  return { start, end: addDays(start, weeks * 7) };
}

/** The anchor one month (month, list) or one week back or forward. */
export function step(view: CalendarView, anchor: Date, direction: -1 | 1): Date {
  if (view === "week") return addDays(anchor, 7 * direction);
  return new Date(anchor.getFullYear(), anchor.getMonth() + direction, 1);
}

/** The days of a range, in order. */
export function daysOf(range: Range): Date[] {
  const days: Date[] = [];
  for (let day = range.start; day < range.end; day = addDays(day, 1)) days.push(day);
  return days;
}

export function dayKey(date: Date): string {
  return `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, "0")}-${String(date.getDate()).padStart(2, "0")}`;
}

/** Entries by local day (`dayKey`), each day's in time order (the daemon answers them sorted). */
export function byDay(items: readonly CalendarItem[]): Map<string, CalendarItem[]> {
  const days = new Map<string, CalendarItem[]>();
  for (const item of items) {
    const key = dayKey(new Date(item.at));
    const list = days.get(key);
    if (list) list.push(item);
    else days.set(key, [item]);
  }
  return days;
}
