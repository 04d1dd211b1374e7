import type { Cron } from "croner";
import { nextCronTime, parseCron } from "./cron.ts";

// When a schedule's runs are due: every `interval_secs` from its creation (or resume), or on a cron expression in
// the schedule's time zone (null: the daemon's local zone).
// After a late tick (downtime, a run still in flight) the next run stays on the original cadence: the first
// window strictly after now, and the windows in between are counted as missed, never run in a burst.

export interface Cadence {
  /** The first window strictly after `fromMs` (creation, resume). */
  first(fromMs: number): number;
  /** For the window `dueMs` that is being handled at `nowMs`: the next window after now and the windows skipped. */
  advance(dueMs: number, nowMs: number): { next: number; missed: number };
}

/** Beyond this many missed cron windows the count stops (a minute schedule after a year down): a lower bound. */
const MAX_COUNTED_CRON_WINDOWS = 10_000;

export function cadenceOf(schedule: {
  interval_secs: number | null;
  cron: string | null;
  timezone: string | null;
}): Cadence {
  if (schedule.interval_secs !== null) return intervalCadence(schedule.interval_secs * 1000);
  return cronCadence(parseCron(schedule.cron ?? "", schedule.timezone));
}

function intervalCadence(periodMs: number): Cadence {
  return {
    first: (fromMs) => fromMs + periodMs,
    advance: (dueMs, nowMs) => {
      const missed = nowMs > dueMs ? Math.floor((nowMs - dueMs) / periodMs) : 0;
      return { next: dueMs + (missed + 1) * periodMs, missed };
    },
  };
}

function cronCadence(cron: Cron): Cadence {
  return {
    first: (fromMs) => nextCronTime(cron, fromMs),
    advance: (dueMs, nowMs) => {
      let next = nextCronTime(cron, dueMs);
      let missed = 0;
      while (next <= nowMs) {
        missed++;
        if (missed >= MAX_COUNTED_CRON_WINDOWS) return { next: nextCronTime(cron, nowMs), missed };
        next = nextCronTime(cron, next);
      }
      return { next, missed };
    },
  };
}
