import type { SessionStore } from "../agent/sessions.ts";
import type { SubmitRequest } from "../agent/taskService.ts";
import { FINAL_STATUSES, type TaskRecord } from "../agent/tasks.ts";
import type { DaemonSettings } from "../config/settings.ts";
import type { EventLog } from "../events/eventLog.ts";
import type { Budget } from "../llm/budget.ts";
import type { Logger } from "../log/logger.ts";
import type { Db } from "../store/database.ts";
import type { Page } from "../util/cursor.ts";
import { AppError, isAppError } from "../util/errors.ts";
import { cadenceOf } from "./cadence.ts";
import { canonicalTimeZone } from "./cron.ts";
import { parseScheduleInput } from "./input.ts";
import { type ScheduleRecord, ScheduleStore } from "./store.ts";

// Runs schedules: one timer for the earliest next run (capped, so a changed clock is noticed within a minute);
// each tick fires what is due. A run is a task in the schedule's own session (TaskService writes its report).
// A schedule never overlaps itself: while its run is in flight a due window is skipped with an event. Windows
// that passed while the daemon was down are run once, with the count of missed windows. A spent session budget
// pauses the schedule with a reason saying what to do.

/** The longest the timer sleeps before looking again. */
export const MAX_TIMER_MS = 60_000;

export interface SchedulerDeps {
  db: Db;
  sessions: Pick<SessionStore, "create">;
  budget: Pick<Budget, "assertWithin">;
  events: Pick<EventLog, "emit">;
  /** TaskService.submit / wait, and a task lookup (TaskStore.find). */
  submit: (request: SubmitRequest) => TaskRecord;
  wait: (taskId: string) => Promise<TaskRecord>;
  findTask: (taskId: string) => TaskRecord | undefined;
  logger: Pick<Logger, "info" | "warn" | "error">;
  settings: Pick<DaemonSettings, "scheduleMinIntervalSecs">;
  /** The clock and timers (ms); tests pass their own. */
  now?: () => number;
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (handle: unknown) => void;
}

export class Scheduler {
  readonly #deps: SchedulerDeps;
  readonly #store: ScheduleStore;
  readonly #now: () => number;
  readonly #setTimer: (fn: () => void, ms: number) => unknown;
  readonly #clearTimer: (handle: unknown) => void;
  /** ASSISTANT_SCHEDULE_MIN_INTERVAL_SECS. */
  readonly minIntervalSecs: number;
  #timer: unknown;
  #closed = false;

  constructor(deps: SchedulerDeps) {
    this.#deps = deps;
    this.#store = new ScheduleStore(deps.db);
    this.#now = deps.now ?? Date.now;
    this.#setTimer =
      deps.setTimer ??
      ((fn, ms) => {
        const timer = setTimeout(fn, ms);
        timer.unref(); // the HTTP server keeps the daemon alive, not this timer
        return timer;
      });
    this.#clearTimer = deps.clearTimer ?? ((handle) => clearTimeout(handle as NodeJS.Timeout));
    this.minIntervalSecs = deps.settings.scheduleMinIntervalSecs;
  }

  /**
   * Daemon start, after TaskService.recover(): forgets runs whose task ended while the daemon was down, follows
   * the ones still queued, then fires what is due (each overdue schedule once) and arms the timer.
   */
  start(): { cleared: number; followed: number } {
    let cleared = 0;
    let followed = 0;
    for (const schedule of this.#store.withRunningTask()) {
      const taskId = schedule.running_task_id!;
      const task = this.#deps.findTask(taskId);
      if (!task || FINAL_STATUSES.has(task.status)) {
        this.#store.finishRun(schedule.id, taskId, this.#iso());
        cleared++;
      } else {
        this.#follow(schedule.id, taskId);
        followed++;
      }
    }
    this.tick();
    return { cleared, followed };
  }

  /** Fires every active schedule that is due, then re-arms the timer. */
  tick(): void {
    if (this.#closed) return;
    for (const schedule of this.#store.due(this.#iso())) {
      try {
        this.#fire(schedule);
      } catch (error) {
        this.#failed(schedule, error);
      }
    }
    this.#arm();
  }

  /** Stops the timer; runs in flight finish (TaskService decides their fate). */
  close(): void {
    this.#closed = true;
    this.#disarm();
  }

  list(query: { limit?: number; cursor?: string } = {}): Page<ScheduleRecord> {
    return this.#store.list(query);
  }

  get(id: string): ScheduleRecord {
    return this.#store.get(id);
  }

  /** Active schedules (paused ones fire nowhere on the calendar). */
  active(): ScheduleRecord[] {
    return this.#store.active();
  }

  /** Validates (the same rules on every surface), gives the schedule its own session, and arms the timer. */
  create(input: unknown): ScheduleRecord {
    const valid = parseScheduleInput(input, this.minIntervalSecs);
    const interval = valid.interval_secs ?? null;
    const cron = valid.cron?.trim() ?? null;
    const timezone = valid.timezone === undefined ? null : canonicalTimeZone(valid.timezone)!;
    const now = this.#now(); // one instant: next_run_at is exactly one window after created_at
    const first = cadenceOf({ interval_secs: interval, cron, timezone }).first(now);
    const schedule = this.#store.atomically(() => {
      const session = this.#deps.sessions.create(`schedule: ${valid.name}`);
      return this.#store.create(
        {
          name: valid.name,
          description: valid.description,
          interval_secs: interval,
          cron,
          timezone,
          task_type: valid.task_type ?? null,
          session_id: session.id,
          next_run_at: new Date(first).toISOString(),
        },
        new Date(now).toISOString(),
      );
    });
    this.#deps.events.emit(
      "schedule_created",
      { schedule_id: schedule.id, name: schedule.name, next_run_at: schedule.next_run_at },
      { session_id: schedule.session_id },
    );
    this.#arm();
    return schedule;
  }

  /** Removes a schedule; a run in flight finishes as a normal task. */
  delete(id: string): ScheduleRecord {
    const schedule = this.#store.get(id);
    this.#store.delete(id);
    this.#deps.events.emit(
      "schedule_deleted",
      { schedule_id: schedule.id, name: schedule.name },
      { session_id: schedule.session_id },
    );
    this.#arm();
    return schedule;
  }

  pause(id: string): ScheduleRecord {
    const schedule = this.#store.get(id);
    if (schedule.status === "paused") {
      throw new AppError("conflict", `schedule ${id} is already paused`, { schedule_id: id, status: schedule.status });
    }
    const paused = this.#setPaused(
      schedule,
      "request",
      `paused by request; resume it with \`assistant schedule resume ${id}\``,
    );
    this.#arm();
    return paused;
  }

  /** Resumes a paused schedule; its next run is one window from now (paused windows are not caught up). */
  resume(id: string): ScheduleRecord {
    const schedule = this.#store.get(id);
    if (schedule.status === "active") {
      throw new AppError("conflict", `schedule ${id} is not paused`, { schedule_id: id, status: schedule.status });
    }
    const next = cadenceOf(schedule).first(this.#now());
    const resumed = this.#store.update(
      id,
      { status: "active", status_reason: null, next_run_at: new Date(next).toISOString() },
      this.#iso(),
    )!;
    this.#deps.events.emit(
      "schedule_resumed",
      { schedule_id: id, name: resumed.name, next_run_at: resumed.next_run_at },
      { session_id: resumed.session_id },
    );
    this.#arm();
    return resumed;
  }

  #fire(schedule: ScheduleRecord): void {
    const dueAt = schedule.next_run_at;
    const { next, missed } = cadenceOf(schedule).advance(Date.parse(dueAt), this.#now());
    const nextRunAt = new Date(next).toISOString();
    try {
      this.#deps.budget.assertWithin(schedule.session_id);
    } catch (error) {
      if (isAppError(error) && error.code === "budget_exceeded") {
        this.#pauseForBudget(schedule, error);
        return;
      }
      throw error;
    }
    const inFlight = schedule.running_task_id ? this.#deps.findTask(schedule.running_task_id) : undefined;
    if (inFlight && !FINAL_STATUSES.has(inFlight.status)) {
      this.#store.update(schedule.id, { next_run_at: nextRunAt }, this.#iso());
      this.#deps.events.emit(
        "schedule_skipped",
        {
          schedule_id: schedule.id,
          name: schedule.name,
          reason: "overlap",
          message: `the run ${inFlight.id} is still ${inFlight.status}, so the run due at ${dueAt} was skipped; the next run is at ${nextRunAt}`,
        },
        { task_id: inFlight.id, session_id: schedule.session_id },
      );
      return;
    }
    const task = this.#store.atomically(() => {
      const submitted = this.#deps.submit({
        message: schedule.description,
        sessionId: schedule.session_id,
        origin: "schedule",
        ...(schedule.task_type ? { taskType: schedule.task_type } : {}),
      });
      this.#store.update(
        schedule.id,
        {
          running_task_id: submitted.id,
          last_task_id: submitted.id,
          last_run_at: this.#iso(),
          runs: schedule.runs + 1,
          next_run_at: nextRunAt,
        },
        this.#iso(),
      );
      return submitted;
    });
    this.#deps.events.emit(
      "schedule_fired",
      { schedule_id: schedule.id, name: schedule.name, task_id: task.id, scheduled_for: dueAt, missed },
      { task_id: task.id, session_id: schedule.session_id },
    );
    this.#deps.logger.info("schedule fired", { schedule_id: schedule.id, task_id: task.id, missed });
    this.#follow(schedule.id, task.id);
  }

  /** A run that could not start is logged and the schedule moves on, so it does not spin the timer. */
  #failed(schedule: ScheduleRecord, error: unknown): void {
    this.#deps.logger.error("a schedule could not run", { schedule_id: schedule.id, error: (error as Error).message });
    try {
      const { next } = cadenceOf(schedule).advance(Date.parse(schedule.next_run_at), this.#now());
      this.#store.update(schedule.id, { next_run_at: new Date(next).toISOString() }, this.#iso());
    } catch (again) {
      this.#deps.logger.error("a schedule could not be moved to its next run", {
        schedule_id: schedule.id,
        error: (again as Error).message,
      });
    }
  }

  /** When the run ends its slot is freed; a run stopped by the budget pauses the schedule. */
  #follow(scheduleId: string, taskId: string): void {
    const ended = (error?: unknown) => {
      try {
        this.#store.finishRun(scheduleId, taskId, this.#iso());
        const schedule = this.#store.find(scheduleId);
        if (schedule?.status === "active" && isAppError(error) && error.code === "budget_exceeded") {
          this.#pauseForBudget(schedule, error);
        }
      } catch (failure) {
        this.#deps.logger.warn("the end of a scheduled run was not recorded", {
          schedule_id: scheduleId,
          task_id: taskId,
          error: (failure as Error).message,
        });
      }
    };
    this.#deps.wait(taskId).then(() => ended(), ended);
  }

  #pauseForBudget(schedule: ScheduleRecord, error: AppError): void {
    const message =
      `paused: ${budgetSpent(error)}. Raise the limit (\`assistant budget set\`, POST /api/budget) or reset the usage ` +
      `of session ${schedule.session_id} (\`assistant budget reset --session ${schedule.session_id}\`, ` +
      `POST /api/budget/reset-session), then resume it (\`assistant schedule resume ${schedule.id}\`)`;
    this.#setPaused(schedule, "budget", message);
    this.#deps.events.emit(
      "schedule_skipped",
      { schedule_id: schedule.id, name: schedule.name, reason: "budget", message },
      { session_id: schedule.session_id },
    );
    this.#deps.events.emit(
      "budget_exhausted",
      { source: "schedule", source_id: schedule.id, session_id: schedule.session_id, message },
      { session_id: schedule.session_id },
    );
    this.#deps.logger.warn("a schedule was paused: its session budget is spent", { schedule_id: schedule.id });
  }

  #setPaused(schedule: ScheduleRecord, reason: "request" | "budget", message: string): ScheduleRecord {
    const paused = this.#store.update(schedule.id, { status: "paused", status_reason: message }, this.#iso())!;
    this.#deps.events.emit(
      "schedule_paused",
      { schedule_id: schedule.id, name: schedule.name, reason, message },
      { session_id: schedule.session_id },
    );
    return paused;
  }

  #arm(): void {
    this.#disarm();
    if (this.#closed) return;
    const earliest = this.#store.earliest();
    if (earliest === undefined) return;
    const delay = Math.min(Math.max(Date.parse(earliest) - this.#now(), 0), MAX_TIMER_MS);
    this.#timer = this.#setTimer(() => {
      this.#timer = undefined;
      this.tick();
    }, delay);
  }

  #disarm(): void {
    if (this.#timer !== undefined) this.#clearTimer(this.#timer);
    this.#timer = undefined;
  }

  #iso(): string {
    return new Date(this.#now()).toISOString();
  }
}

/** What the budget error says was spent, without its chat-oriented advice. */
function budgetSpent(error: AppError): string {
  const d = error.details ?? {};
  if (typeof d.max_tokens_per_session === "number") {
    return `its session used ${d.tokens_used} tokens of its ${d.max_tokens_per_session} token budget (ASSISTANT_MAX_TOKENS_PER_SESSION)`;
  }
  if (typeof d.max_cost_per_session_usd === "number" && typeof d.cost_usd === "number") {
    return `its session cost an estimated $${d.cost_usd.toFixed(4)} of its $${d.max_cost_per_session_usd} budget (ASSISTANT_MAX_COST_PER_SESSION_USD)`;
  }
  return error.message;
}
