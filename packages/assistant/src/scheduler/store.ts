import { randomUUID } from "node:crypto";
import { z } from "zod";
import { type Db, statement } from "../store/database.ts";
import { pageBySeq } from "../store/pageBySeq.ts";
import type { Page } from "../util/cursor.ts";
import { AppError } from "../util/errors.ts";

// The `schedules` table (migrations v7 and v8). Times are RFC 3339 UTC strings, which SQLite compares in time order.

export const SCHEDULE_STATUSES = ["active", "paused"] as const;
export type ScheduleStatus = (typeof SCHEDULE_STATUSES)[number];

export const scheduleRecordSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    /** The message each run sends to the agent. */
    description: z.string(),
    interval_secs: z.number().nullable(),
    cron: z.string().nullable(),
    /** IANA time zone of the cron expression; null: the daemon's local zone (always null for an interval). */
    timezone: z.string().nullable(),
    task_type: z.string().nullable(),
    /** Every run of the schedule continues this chat session (shared context and token budget). */
    session_id: z.string(),
    status: z.enum(SCHEDULE_STATUSES),
    /** Why it is paused and what to do about it. */
    status_reason: z.string().nullable(),
    next_run_at: z.string(),
    last_run_at: z.string().nullable(),
    last_task_id: z.string().nullable(),
    /** The run in flight; a schedule never starts another while it is set. */
    running_task_id: z.string().nullable(),
    runs: z.number(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: "Schedule" });

export type ScheduleRecord = z.infer<typeof scheduleRecordSchema>;

export type NewSchedule = Pick<
  ScheduleRecord,
  "name" | "description" | "interval_secs" | "cron" | "timezone" | "task_type" | "session_id" | "next_run_at"
>;

type Changes = Partial<
  Pick<
    ScheduleRecord,
    "status" | "status_reason" | "next_run_at" | "last_run_at" | "last_task_id" | "running_task_id" | "runs"
  >
>;

const COLUMNS =
  "id, name, description, interval_secs, cron, timezone, task_type, session_id, status, status_reason, next_run_at, last_run_at, last_task_id, running_task_id, runs, created_at, updated_at";
const CHANGEABLE = new Set([
  "status",
  "status_reason",
  "next_run_at",
  "last_run_at",
  "last_task_id",
  "running_task_id",
  "runs",
]);

export class ScheduleStore {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  atomically<T>(fn: () => T): T {
    return this.#db.transaction(fn)();
  }

  create(input: NewSchedule, now: string): ScheduleRecord {
    const schedule: ScheduleRecord = {
      id: randomUUID(),
      ...input,
      status: "active",
      status_reason: null,
      last_run_at: null,
      last_task_id: null,
      running_task_id: null,
      runs: 0,
      created_at: now,
      updated_at: now,
    };
    statement(
      this.#db,
      `INSERT INTO schedules (${COLUMNS}) VALUES (@id, @name, @description, @interval_secs, @cron, @timezone, @task_type, @session_id, @status, @status_reason, @next_run_at, @last_run_at, @last_task_id, @running_task_id, @runs, @created_at, @updated_at)`,
    ).run(schedule);
    return schedule;
  }

  find(id: string): ScheduleRecord | undefined {
    return statement(this.#db, `SELECT ${COLUMNS} FROM schedules WHERE id = ?`).get(id) as ScheduleRecord | undefined;
  }

  get(id: string): ScheduleRecord {
    const schedule = this.find(id);
    if (!schedule) throw new AppError("not_found", `no schedule with id ${id}`, { schedule_id: id });
    return schedule;
  }

  /** Newest first. */
  list(query: { limit?: number; cursor?: string } = {}): Page<ScheduleRecord> {
    const { rows, next_cursor } = pageBySeq<ScheduleRecord & { seq: number }>(this.#db, {
      table: "schedules",
      columns: `seq, ${COLUMNS}`,
      ...query,
    });
    return { items: rows.map(({ seq: _seq, ...schedule }) => schedule), next_cursor };
  }

  /** Active schedules whose next run is at or before `now`, earliest first. */
  due(now: string): ScheduleRecord[] {
    return statement(
      this.#db,
      `SELECT ${COLUMNS} FROM schedules WHERE status = 'active' AND next_run_at <= ? ORDER BY next_run_at, seq`,
    ).all(now) as ScheduleRecord[];
  }

  /** The earliest next run of an active schedule, if any. */
  earliest(): string | undefined {
    const row = statement(this.#db, "SELECT MIN(next_run_at) AS at FROM schedules WHERE status = 'active'").get() as {
      at: string | null;
    };
    return row.at ?? undefined;
  }

  /** Active schedules, oldest first (the calendar's future fire times). */
  active(): ScheduleRecord[] {
    return statement(
      this.#db,
      `SELECT ${COLUMNS} FROM schedules WHERE status = 'active' ORDER BY seq`,
    ).all() as ScheduleRecord[];
  }

  /** Schedules with a run in flight (startup recovery). */
  withRunningTask(): ScheduleRecord[] {
    return statement(
      this.#db,
      `SELECT ${COLUMNS} FROM schedules WHERE running_task_id IS NOT NULL ORDER BY seq`,
    ).all() as ScheduleRecord[];
  }

  /** Applies changes; undefined when the schedule was deleted meanwhile. */
  update(id: string, changes: Changes, now: string): ScheduleRecord | undefined {
    const keys = Object.keys(changes).filter((key) => CHANGEABLE.has(key));
    const sets = [...keys.map((key) => `${key} = @${key}`), "updated_at = @updated_at"].join(", ");
    statement(this.#db, `UPDATE schedules SET ${sets} WHERE id = @id`).run({ ...changes, id, updated_at: now });
    return this.find(id);
  }

  /** Clears the run in flight only if it is still `taskId` (a later run is not forgotten). */
  finishRun(id: string, taskId: string, now: string): void {
    statement(
      this.#db,
      "UPDATE schedules SET running_task_id = NULL, updated_at = ? WHERE id = ? AND running_task_id = ?",
    ).run(now, id, taskId);
  }

  delete(id: string): boolean {
    return statement(this.#db, "DELETE FROM schedules WHERE id = ?").run(id).changes > 0;
  }
}
