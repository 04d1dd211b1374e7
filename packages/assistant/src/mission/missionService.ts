import { z } from "zod";
import { buildReport, type ReportItem, type TaskReport } from "../agent/reports.ts";
import type { TaskService } from "../agent/taskService.ts";
import { FINAL_STATUSES, type TaskRecord, type TaskStore } from "../agent/tasks.ts";
import type { DataPaths } from "../config/paths.ts";
import { type AutonomousMission, autonomousMissionSchema } from "../config/schemas/autonomousMission.ts";
import type { DaemonSettings } from "../config/settings.ts";
import type { EventLog } from "../events/eventLog.ts";
import type { StoredEvent } from "../events/registry.ts";
import type { Budget } from "../llm/budget.ts";
import type { Logger } from "../log/logger.ts";
import type { Db } from "../store/database.ts";
import type { Page } from "../util/cursor.ts";
import { AppError, type ConfigError, isAppError } from "../util/errors.ts";
import { MAX_TIMER_MS, type MissionClock } from "./clock.ts";
import { cycleMessage } from "./cycleMessage.ts";
import type { WatchMissionFile } from "./fileWatch.ts";
import { listMissionEvents } from "./missionEvents.ts";
import {
  cycleTaskType,
  type MissionFileRead,
  readMissionFile,
  reportDirPath,
  updateMissionFile,
} from "./missionFile.ts";
import { type MissionReport, writeMissionReport } from "./missionReports.ts";
import {
  type CurrentCycle,
  type LastCycle,
  lastCycleSchema,
  loadMissionState,
  MISSION_STATUS_REASONS,
  MISSION_STATUSES,
  type MissionState,
  type MissionStatus,
  type PauseReason,
  type StatusReason,
  saveMissionState,
} from "./missionState.ts";

// The autonomous mission (docs/mission.md): when autonomous_mission.yaml enables it and it is not paused,
// every heartbeat_secs a cycle runs as a task (origin "mission") in the mission's own chat session. Cycles never
// overlap: a heartbeat during a cycle waits for it. Each cycle ends with a report in report_dir; a long one gets
// interim reports. Pause stops new cycles and lets the current one finish; a spent session budget pauses it too.

const SOURCE_ID = "autonomous_mission";

/** What the mission needs of the task service (TaskService has it all). */
export type MissionAgent = Pick<TaskService, "submit" | "wait" | "report"> & { tasks: Pick<TaskStore, "find"> };

export interface MissionDeps {
  paths: DataPaths;
  db: Db;
  events: Pick<EventLog, "emit" | "list">;
  agent: MissionAgent;
  budget: Pick<Budget, "assertWithin">;
  logger: Pick<Logger, "info" | "warn" | "error">;
  clock: MissionClock;
  settings: Pick<DaemonSettings, "missionInterimReportSecs">;
  /** Reports hand edits of the file (fileWatch.ts), which then apply at once. */
  watchFile: WatchMissionFile;
}

export const missionViewSchema = z
  .object({
    objective: z.string().nullable(),
    heartbeat_secs: z.number().nullable(),
    report_dir: z.string().nullable(),
    heartbeat_preferred_task_type: z.string().nullable(),
    enabled: z.boolean().nullable(),
    status: z.enum(MISSION_STATUSES),
    status_reason: z.enum(MISSION_STATUS_REASONS).nullable(),
    /** For a person: what the reason means and what to do about it. */
    status_message: z.string().nullable(),
    /** autonomous_mission.yaml does not validate (the file keys above are then null). */
    error: z.object({ file: z.string(), key: z.string(), reason: z.string() }).nullable(),
    /** The task type cycles run as (heartbeat_preferred_task_type after aliases). */
    task_type: z.string().nullable(),
    cycles: z.number(),
    current_cycle: z.number().nullable(),
    current_task_id: z.string().nullable(),
    last_cycle: lastCycleSchema.nullable(),
    next_heartbeat_at: z.string().nullable(),
    session_id: z.string().nullable(),
    report_dir_path: z.string().nullable(),
  })
  .meta({ id: "Mission" });

export type MissionView = z.infer<typeof missionViewSchema>;

interface Running {
  current: CurrentCycle;
  objective: string;
  interimTimer: unknown;
}

const DEFAULTS: AutonomousMission = autonomousMissionSchema.parse({});

export class MissionService {
  readonly #deps: MissionDeps;
  readonly #interimMs: number;
  #state: MissionState;
  #file: MissionFileRead = { config: DEFAULTS, error: null };
  /** The last valid file: its interval and report_dir still apply while the file is invalid. */
  #lastConfig: AutonomousMission = DEFAULTS;
  #startError: string | null = null;
  #announced: { status: MissionStatus; reason: StatusReason | null };
  #timer: unknown = null;
  #nextHeartbeatAt: number | null = null;
  /** A heartbeat came while a cycle ran: the next cycle starts when it ends. */
  #pending = false;
  #running: Running | null = null;
  #closed = false;
  #unwatch: (() => void) | null = null;
  /** The file as the heartbeat was last armed for (GET reads the file too, so #file alone cannot tell). */
  #applied: MissionFileRead = this.#file;

  constructor(deps: MissionDeps) {
    this.#deps = deps;
    this.#interimMs = deps.settings.missionInterimReportSecs * 1000;
    this.#state = loadMissionState(deps.db);
    this.#read();
    this.#announced = this.#computeStatus();
  }

  /** Daemon start, after the task service recovered: settles the cycle of the last run, then arms the heartbeat. */
  start(): void {
    const current = this.#state.current;
    if (current) {
      this.#running = { current, objective: this.#lastConfig.objective, interimTimer: null };
      const task = this.#deps.agent.tasks.find(current.task_id);
      // A task that was running when the daemon died is failed as interrupted by now; a queued one runs again.
      if (!task || FINAL_STATUSES.has(task.status)) this.#finishCycle(null);
      else this.#follow();
    }
    this.#sync();
    this.#armFromRhythm();
    this.#applied = this.#file;
    this.#unwatch = this.#deps.watchFile(this.#deps.paths.mission, () =>
      this.#guard("file reload", () => this.reload()),
    );
  }

  /**
   * The file changed on disk (a hand edit, or our own PUT): applies it now. A change of keys emits
   * mission_updated and re-arms the heartbeat, so a new interval or `enabled: true` counts from now instead of
   * waiting for the heartbeat armed under the old file.
   */
  reload(): void {
    if (this.#closed) return;
    const before = this.#applied;
    this.#read();
    this.#applied = this.#file;
    const fields = changedKeys(before.config, this.#file.config);
    if (fields.length > 0) {
      this.#deps.events.emit("mission_updated", { fields });
      this.#armFromRhythm();
    }
    if (this.#file.error && before.error?.message !== this.#file.error.message) {
      this.#deps.logger.warn("autonomous_mission.yaml is invalid: no new cycle starts until it is fixed", {
        error: this.#file.error.message,
      });
    }
    this.#sync();
  }

  view(): MissionView {
    this.#read();
    this.#sync();
    const config = this.#file.config;
    const { status, reason } = this.#computeStatus();
    return {
      objective: config?.objective ?? null,
      heartbeat_secs: config?.heartbeat_secs ?? null,
      report_dir: config?.report_dir ?? null,
      heartbeat_preferred_task_type: config ? (config.heartbeat_preferred_task_type ?? null) : null,
      enabled: config?.enabled ?? null,
      status,
      status_reason: reason,
      status_message: this.#statusMessage(reason),
      error: this.#file.error
        ? { file: this.#file.error.file, key: this.#file.error.key, reason: this.#file.error.reason }
        : null,
      task_type: config ? cycleTaskType(config) : null,
      cycles: this.#state.cycles,
      current_cycle: this.#state.current?.cycle ?? null,
      current_task_id: this.#state.current?.task_id ?? null,
      last_cycle: this.#state.last_cycle,
      next_heartbeat_at: this.#nextHeartbeatAt === null ? null : new Date(this.#nextHeartbeatAt).toISOString(),
      session_id: this.#state.session_id,
      report_dir_path: config ? reportDirPath(this.#deps.paths, config) : null,
    };
  }

  /** Merges keys into autonomous_mission.yaml (validated before writing) and applies the result at once. */
  update(changes: Record<string, unknown>): MissionView {
    if (Object.keys(changes).length === 0) {
      throw new AppError("invalid_request", "send at least one mission key to change", { field: "body" });
    }
    const fields = updateMissionFile(this.#deps.paths, changes);
    if (fields.length > 0) this.#deps.events.emit("mission_updated", { fields });
    this.#read();
    this.#applied = this.#file;
    this.#sync();
    this.#armFromRhythm();
    return this.view();
  }

  pause(): MissionView {
    if (this.#state.paused) {
      throw new AppError("conflict", `the mission is already paused (${this.#state.pause_reason})`, {
        status: "paused",
      });
    }
    this.#pauseWith("operator", null);
    return this.view();
  }

  /** Back to idle (or running while a cycle still runs); the next heartbeat is heartbeat_secs from now. */
  resume(): MissionView {
    if (!this.#state.paused) {
      throw new AppError("conflict", "the mission is not paused", { status: this.#computeStatus().status });
    }
    this.#save({ ...this.#state, paused: false, pause_reason: null, pause_message: null });
    this.#read();
    this.#sync();
    this.#schedule(this.#deps.clock.now() + this.#intervalMs());
    return this.view();
  }

  events(query: { limit?: number; sinceMs?: number; cursor?: string }): Page<StoredEvent> {
    return listMissionEvents(this.#deps.db, query);
  }

  /** Daemon stop: no new heartbeat or report timer; a cycle ending during the stop is still recorded. */
  close(): void {
    this.#closed = true;
    this.#unwatch?.();
    this.#clearTimer();
    if (this.#running) this.#deps.clock.clearTimer(this.#running.interimTimer);
  }

  // ---- heartbeat --------------------------------------------------------------------------------------------

  /** Keeps the rhythm of the last cycle (a missed heartbeat runs at once); a fresh mission waits one interval. */
  #armFromRhythm(): void {
    if (this.#closed || this.#state.paused) return;
    const now = this.#deps.clock.now();
    const last = this.#state.last_heartbeat_at;
    this.#schedule(last === null ? now + this.#intervalMs() : Math.max(now, last + this.#intervalMs()));
  }

  #schedule(at: number): void {
    this.#clearTimer();
    if (this.#closed) return;
    this.#nextHeartbeatAt = at;
    const delay = Math.min(Math.max(0, at - this.#deps.clock.now()), MAX_TIMER_MS);
    this.#timer = this.#deps.clock.setTimer(() => {
      this.#timer = null;
      if (this.#deps.clock.now() < at) this.#schedule(at);
      else this.#guard("heartbeat", () => this.#heartbeat());
    }, delay);
  }

  #clearTimer(): void {
    if (this.#timer !== null) this.#deps.clock.clearTimer(this.#timer);
    this.#timer = null;
    this.#nextHeartbeatAt = null;
  }

  #heartbeat(): void {
    if (this.#closed || this.#state.paused) return;
    this.#read(); // hand edits apply from this heartbeat on
    this.#schedule(this.#deps.clock.now() + this.#intervalMs());
    const config = this.#runnable();
    if (config && this.#running) this.#pending = true;
    else if (config) this.#startCycle(config);
    this.#sync();
  }

  #intervalMs(): number {
    return this.#lastConfig.heartbeat_secs * 1000;
  }

  // ---- cycles -----------------------------------------------------------------------------------------------

  #startCycle(config: AutonomousMission): void {
    const sessionId = this.#state.session_id;
    if (sessionId) {
      try {
        this.#deps.budget.assertWithin(sessionId);
      } catch (error) {
        if (!isAppError(error) || error.code !== "budget_exceeded") throw error;
        this.#pauseForBudget(sessionId, error);
        return;
      }
    }
    const cycle = this.#state.cycles + 1;
    const taskType = cycleTaskType(config);
    const previous = this.#state.last_cycle;
    const previousReply = previous ? (this.#deps.agent.tasks.find(previous.task_id)?.reply ?? null) : null;
    let task: TaskRecord;
    try {
      task = this.#submit(cycleMessage(config.objective, cycle, previous, previousReply), taskType, sessionId);
    } catch (error) {
      this.#startError = (error as Error).message;
      this.#deps.logger.warn("the mission cycle could not start", { cycle, error: this.#startError });
      return;
    }
    this.#startError = null;
    const now = this.#deps.clock.now();
    const current: CurrentCycle = { cycle, task_id: task.id, task_type: taskType, started_at: iso(now) };
    this.#save({ ...this.#state, cycles: cycle, session_id: task.session_id, last_heartbeat_at: now, current });
    this.#deps.events.emit(
      "mission_heartbeat",
      { cycle, task_id: task.id, task_type: taskType },
      { task_id: task.id, session_id: task.session_id },
    );
    this.#running = { current, objective: config.objective, interimTimer: null };
    this.#follow();
  }

  /** Submits in the mission's session; one that no longer exists is replaced by a new session. */
  #submit(message: string, taskType: string, sessionId: string | null): TaskRecord {
    const request = { message, taskType, origin: "mission" as const };
    if (!sessionId) return this.#deps.agent.submit(request);
    try {
      return this.#deps.agent.submit({ ...request, sessionId });
    } catch (error) {
      if (!isAppError(error) || error.code !== "not_found") throw error;
      return this.#deps.agent.submit(request);
    }
  }

  /** Waits for the running cycle's task, writing interim reports meanwhile. */
  #follow(): void {
    const running = this.#running!;
    this.#armInterim(running);
    this.#deps.agent.wait(running.current.task_id).then(
      () => this.#guard("cycle end", () => this.#finishCycle(null)),
      (error: unknown) => this.#guard("cycle end", () => this.#finishCycle(error)),
    );
  }

  #finishCycle(error: unknown): void {
    const running = this.#running;
    if (!running) return;
    this.#deps.clock.clearTimer(running.interimTimer);
    this.#running = null;
    const { current } = running;
    const task = this.#deps.agent.tasks.find(current.task_id);
    const status = task?.status ?? "failed";
    const reason = task ? task.reason : "the task record is gone";
    const written = this.#writeReport({
      ...this.#reportHead(running, task),
      interim: false,
      status,
      reason,
      finished_at: task?.finished_at ?? iso(this.#deps.clock.now()),
      reply: task?.reply ?? null,
      ...reportLists(task ? this.#taskReport(task.id) : null),
    });
    const last: LastCycle = {
      cycle: current.cycle,
      task_id: current.task_id,
      status,
      reason,
      finished_at: iso(this.#deps.clock.now()),
      report_path: written,
    };
    this.#save({ ...this.#state, current: null, last_cycle: last });
    const scope = { task_id: current.task_id, ...(task ? { session_id: task.session_id } : {}) };
    this.#deps.events.emit(
      "mission_cycle_finished",
      { cycle: current.cycle, task_id: current.task_id, status, reason },
      scope,
    );
    if (written)
      this.#deps.events.emit("mission_report", { cycle: current.cycle, path: written, interim: false }, scope);
    if (isAppError(error) && error.code === "budget_exceeded" && task) {
      this.#pauseForBudget(task.session_id, error);
      return;
    }
    this.#sync();
    if (this.#pending) {
      this.#pending = false;
      this.#read();
      const config = this.#runnable();
      if (config && !this.#closed && !this.#state.paused) this.#startCycle(config);
      this.#sync();
    }
  }

  #taskReport(taskId: string): TaskReport | null {
    try {
      return this.#deps.agent.report(taskId);
    } catch (error) {
      this.#deps.logger.warn("the mission cycle's task report is unavailable", {
        task_id: taskId,
        error: (error as Error).message,
      });
      return null;
    }
  }

  #armInterim(running: Running): void {
    if (this.#closed) return;
    running.interimTimer = this.#deps.clock.setTimer(() => {
      if (this.#running !== running || this.#closed) return;
      this.#guard("interim report", () => this.#writeInterim(running));
      this.#armInterim(running);
    }, this.#interimMs);
  }

  /** What the running cycle has done so far, from its stored events: tool calls and the latest model turn. */
  #writeInterim(running: Running): void {
    const task = this.#deps.agent.tasks.find(running.current.task_id);
    if (!task || FINAL_STATUSES.has(task.status)) return;
    const events = this.#deps.events.list({ taskId: task.id, limit: 10_000 });
    const lastTurn = events.findLast((e) => e.kind === "message_delta")?.data.text ?? null;
    const written = this.#writeReport({
      ...this.#reportHead(running, task),
      interim: true,
      status: task.status,
      reason: null,
      finished_at: null,
      reply: lastTurn,
      ...reportLists(buildReport(task, events)),
    });
    if (written) {
      this.#deps.events.emit(
        "mission_report",
        { cycle: running.current.cycle, path: written, interim: true },
        { task_id: task.id, session_id: task.session_id },
      );
    }
  }

  #reportHead(running: Running, task: TaskRecord | undefined) {
    const { current } = running;
    return {
      objective: running.objective,
      cycle: current.cycle,
      task_id: current.task_id,
      session_id: task?.session_id ?? this.#state.session_id ?? "",
      task_type: current.task_type,
      started_at: current.started_at,
      written_at: iso(this.#deps.clock.now()),
    };
  }

  /** Writes a report into report_dir; returns its Markdown path, or null (logged) when it could not be written. */
  #writeReport(report: MissionReport): string | null {
    const dir = reportDirPath(this.#deps.paths, this.#lastConfig);
    try {
      return writeMissionReport(dir, report);
    } catch (error) {
      this.#deps.logger.warn("the mission report could not be written", {
        dir,
        cycle: report.cycle,
        error: (error as Error).message,
      });
      return null;
    }
  }

  // ---- status -----------------------------------------------------------------------------------------------

  #pauseWith(reason: PauseReason, message: string | null): void {
    this.#save({ ...this.#state, paused: true, pause_reason: reason, pause_message: message });
    this.#pending = false;
    this.#clearTimer();
    this.#sync();
  }

  #pauseForBudget(sessionId: string, error: AppError): void {
    const used = error.message.split(": start a new session")[0];
    const message =
      `the mission's session ${sessionId} has spent its budget (${used}). Raise the limit (\`assistant budget set\`, ` +
      `POST /api/budget) or reset the session's usage (\`assistant budget reset --session ${sessionId}\`, ` +
      `POST /api/budget/reset-session {"session_id":"${sessionId}"}), then resume the mission ` +
      "(`assistant mission resume`, POST /api/autonomous-mission/resume).";
    this.#deps.events.emit(
      "budget_exhausted",
      { source: "mission", source_id: SOURCE_ID, session_id: sessionId, message },
      { session_id: sessionId },
    );
    this.#deps.logger.warn("the mission is paused: its session budget is spent", { session_id: sessionId });
    this.#pauseWith("budget", message);
  }

  #computeStatus(): { status: MissionStatus; reason: StatusReason | null } {
    if (this.#state.paused) return { status: "paused", reason: this.#state.pause_reason };
    if (this.#state.current) return { status: "running", reason: null };
    const config = this.#file.config;
    if (!config) return { status: "idle", reason: "config_invalid" };
    if (!config.enabled) return { status: "idle", reason: "disabled" };
    return { status: "idle", reason: this.#startError ? "start_failed" : null };
  }

  /** Emits mission_state_changed when the status or its reason changed since the last announcement. */
  #sync(): void {
    const next = this.#computeStatus();
    const previous = this.#announced;
    if (next.status === previous.status && next.reason === previous.reason) return;
    this.#announced = next;
    this.#deps.events.emit("mission_state_changed", {
      status: next.status,
      previous: previous.status,
      reason: next.reason,
    });
  }

  #statusMessage(reason: StatusReason | null): string | null {
    switch (reason) {
      case "operator":
        return "paused by the operator: `assistant mission resume` (POST /api/autonomous-mission/resume) continues";
      case "budget":
        return this.#state.pause_message;
      case "disabled":
        return "enabled is false in autonomous_mission.yaml: no cycle runs";
      case "config_invalid":
        return `${(this.#file.error as ConfigError).message}; no cycle runs until the file is fixed`;
      case "start_failed":
        return `the last cycle could not start: ${this.#startError}`;
      default:
        return null;
    }
  }

  // ---- helpers ----------------------------------------------------------------------------------------------

  #read(): void {
    this.#file = readMissionFile(this.#deps.paths);
    if (this.#file.config) this.#lastConfig = this.#file.config;
  }

  /** The file's mission when it should run; the schema already refuses an enabled mission without objective. */
  #runnable(): AutonomousMission | null {
    const config = this.#file.config;
    return config?.enabled ? config : null;
  }

  #save(state: MissionState): void {
    this.#state = state;
    saveMissionState(this.#deps.db, state);
  }

  /** Timer and promise callbacks must never throw into the event loop: the daemon keeps running, the log says why. */
  #guard(what: string, fn: () => void): void {
    try {
      fn();
    } catch (error) {
      this.#deps.logger.error(`mission ${what} failed`, { error: (error as Error).message });
    }
  }
}

function reportLists(report: Pick<TaskReport, "done" | "needs_review" | "failed" | "next_steps"> | null): {
  done: ReportItem[];
  needs_review: ReportItem[];
  failed: ReportItem[];
  next_steps: ReportItem[];
} {
  return {
    done: report?.done ?? [],
    needs_review: report?.needs_review ?? [],
    failed: report?.failed ?? [],
    next_steps: report?.next_steps ?? [],
  };
}

/** The file keys whose value differs (all of them when the file turned valid or invalid). */
function changedKeys(before: AutonomousMission | null, after: AutonomousMission | null): string[] {
  if (before === after) return [];
  if (!before || !after) return before || after ? Object.keys(before ?? after ?? {}) : [];
  return (Object.keys({ ...before, ...after }) as Array<keyof AutonomousMission>).filter(
    (key) => before[key] !== after[key],
  );
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
