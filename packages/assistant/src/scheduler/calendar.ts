import { z } from "zod";
import { type Db, statement } from "../store/database.ts";
import { AppError } from "../util/errors.ts";
import { parseRfc3339 } from "../util/rfc3339.ts";
import { cadenceOf } from "./cadence.ts";
import type { ScheduleRecord } from "./store.ts";

// The calendar of the UIs (GET /api/calendar): within a bounded range, the future fire times of active schedules
// (by the scheduler's own cadence) and of the mission heartbeat, and the past task runs and mission cycles.

export const MAX_CALENDAR_DAYS = 92;
/** A schedule every minute would fill a range with 100,000 fires: past this many the list says `truncated`. */
export const MAX_FIRES_PER_SOURCE = 300;
/** Past task runs and mission cycles, each. */
export const MAX_PAST_ITEMS = 2_000;
const TITLE_CHARS = 80;
const DAY_MS = 86_400_000;

export const calendarItemSchema = z
  .object({
    kind: z.enum(["schedule", "mission", "task"]),
    /** RFC 3339 UTC. */
    at: z.string(),
    title: z.string(),
    /** The schedule (future fires), the task (past runs and cycles); null for a future mission heartbeat. */
    ref_id: z.string().nullable(),
    /** The task's status for past runs and cycles; absent for future fire times. */
    status: z.string().optional(),
  })
  .meta({ id: "CalendarItem" });

export type CalendarItem = z.infer<typeof calendarItemSchema>;

export const calendarSchema = z
  .object({
    items: z.array(calendarItemSchema),
    /** Some source had more entries in the range than the caps above: a shorter range shows them all. */
    truncated: z.boolean(),
  })
  .meta({ id: "Calendar" });

export type Calendar = z.infer<typeof calendarSchema>;

/** The mission as far as its heartbeat goes (a MissionView has these fields). */
export interface MissionHeartbeat {
  enabled: boolean | null;
  status: string;
  heartbeat_secs: number | null;
  next_heartbeat_at: string | null;
}

/**
 * `from` and `to` (exclusive) as epoch ms: each a date (`2026-03-01`, midnight UTC) or an RFC 3339 time; `to`
 * after `from`, at most MAX_CALENDAR_DAYS apart. A bad one is an `invalid_request` naming the field.
 */
export function parseCalendarRange(from: string | undefined, to: string | undefined): { fromMs: number; toMs: number } {
  const fromMs = parseBound("from", from);
  const toMs = parseBound("to", to);
  if (toMs <= fromMs) throw new AppError("invalid_request", "to must be after from", { field: "to" });
  if (toMs - fromMs > MAX_CALENDAR_DAYS * DAY_MS) {
    throw new AppError(
      "invalid_request",
      `the range is ${Math.ceil((toMs - fromMs) / DAY_MS)} days; at most ${MAX_CALENDAR_DAYS} days at a time`,
      { field: "to" },
    );
  }
  return { fromMs, toMs };
}

function parseBound(field: "from" | "to", value: string | undefined): number {
  if (value === undefined || value === "") {
    throw new AppError("invalid_request", `${field} is required (a date such as 2026-03-01 or an RFC 3339 time)`, {
      field,
    });
  }
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(value) ? parseRfc3339(`${value}T00:00:00Z`) : parseRfc3339(value);
  if (ms === null) {
    throw new AppError(
      "invalid_request",
      `${field} must be a date such as 2026-03-01 or an RFC 3339 time such as 2026-03-01T09:00:00+01:00`,
      { field },
    );
  }
  return ms;
}

export function buildCalendar(
  db: Db,
  input: {
    schedules: readonly ScheduleRecord[];
    mission: MissionHeartbeat;
    fromMs: number;
    toMs: number;
    nowMs: number;
  },
): Calendar {
  const { fromMs, toMs, nowMs } = input;
  let truncated = false;
  const items: CalendarItem[] = [];
  const start = Math.max(fromMs, nowMs);
  for (const schedule of input.schedules) {
    const fires = scheduleFires(schedule, start, toMs);
    truncated ||= fires.truncated;
    for (const at of fires.times)
      items.push({ kind: "schedule", at: iso(at), title: schedule.name, ref_id: schedule.id });
  }
  const beats = heartbeats(input.mission, start, toMs);
  truncated ||= beats.truncated;
  for (const at of beats.times) items.push({ kind: "mission", at: iso(at), title: "Mission heartbeat", ref_id: null });
  const tasks = pastTasks(db, fromMs, toMs);
  const cycles = pastCycles(db, fromMs, toMs);
  truncated ||= tasks.truncated || cycles.truncated;
  items.push(...tasks.items, ...cycles.items);
  items.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  return { items, truncated };
}

interface Times {
  times: number[];
  truncated: boolean;
}

/** The windows of an active schedule in [start, to), from its armed next_run_at on by its own cadence. */
function scheduleFires(schedule: ScheduleRecord, start: number, to: number): Times {
  const cadence = cadenceOf(schedule);
  let at = Date.parse(schedule.next_run_at);
  // Overdue (the daemon was down) or before the range: the first window from `start` on.
  if (at < start) at = schedule.interval_secs !== null ? cadence.advance(at, start - 1).next : cadence.first(start - 1);
  const times: number[] = [];
  while (at < to) {
    if (times.length === MAX_FIRES_PER_SOURCE) return { times, truncated: true };
    times.push(at);
    at = cadence.advance(at, at).next;
  }
  return { times, truncated: false };
}

/** Every heartbeat_secs from the armed next heartbeat, while the mission is enabled and not paused. */
function heartbeats(mission: MissionHeartbeat, start: number, to: number): Times {
  if (
    mission.enabled !== true ||
    mission.status === "paused" ||
    !mission.next_heartbeat_at ||
    !mission.heartbeat_secs
  ) {
    return { times: [], truncated: false };
  }
  const period = mission.heartbeat_secs * 1000;
  let at = Date.parse(mission.next_heartbeat_at);
  if (at < start) at += Math.ceil((start - at) / period) * period;
  const times: number[] = [];
  for (; at < to; at += period) {
    if (times.length === MAX_FIRES_PER_SOURCE) return { times, truncated: true };
    times.push(at);
  }
  return { times, truncated: false };
}

/** Top-level tasks created in the range (sub-agents belong to their parent; mission cycles come from events). */
function pastTasks(db: Db, fromMs: number, toMs: number): { items: CalendarItem[]; truncated: boolean } {
  const rows = statement(
    db,
    `SELECT id, message, status, created_at FROM tasks
     WHERE created_at >= ? AND created_at < ? AND parent_id IS NULL AND origin != 'mission'
     ORDER BY created_at LIMIT ?`,
  ).all(iso(fromMs), iso(toMs), MAX_PAST_ITEMS + 1) as Array<{
    id: string;
    message: string;
    status: string;
    created_at: string;
  }>;
  return {
    items: rows.slice(0, MAX_PAST_ITEMS).map((row) => ({
      kind: "task",
      at: row.created_at,
      title: titleOf(row.message),
      ref_id: row.id,
      status: row.status,
    })),
    truncated: rows.length > MAX_PAST_ITEMS,
  };
}

/** Mission cycles started in the range (their mission_heartbeat event), with their task's status. */
function pastCycles(db: Db, fromMs: number, toMs: number): { items: CalendarItem[]; truncated: boolean } {
  const rows = statement(
    db,
    `SELECT e.ts AS ts, json_extract(e.data, '$.cycle') AS cycle, e.task_id AS task_id, t.status AS status
     FROM events e LEFT JOIN tasks t ON t.id = e.task_id
     WHERE e.kind = 'mission_heartbeat' AND e.ts >= ? AND e.ts < ?
     ORDER BY e.seq LIMIT ?`,
  ).all(iso(fromMs), iso(toMs), MAX_PAST_ITEMS + 1) as Array<{
    ts: string;
    cycle: number | null;
    task_id: string | null;
    status: string | null;
  }>;
  return {
    items: rows.slice(0, MAX_PAST_ITEMS).map((row) => ({
      kind: "mission",
      at: row.ts,
      title: `Mission cycle ${row.cycle ?? "?"}`,
      ref_id: row.task_id,
      status: row.status ?? "unknown",
    })),
    truncated: rows.length > MAX_PAST_ITEMS,
  };
}

/** The first line of a task's message, shortened. */
function titleOf(message: string): string {
  const line = message.trim().split("\n", 1)[0] ?? "";
  return line.length > TITLE_CHARS ? `${line.slice(0, TITLE_CHARS - 1)}…` : line;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
