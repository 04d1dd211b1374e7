import { writeFileSync } from "node:fs";
import { buildReport, type TaskReport } from "../../src/agent/reports.ts";
import { SessionStore } from "../../src/agent/sessions.ts";
import type { SubmitRequest } from "../../src/agent/taskService.ts";
import { FINAL_STATUSES, type TaskRecord, type TaskStatus, TaskStore } from "../../src/agent/tasks.ts";
import { type DataPaths, dataPaths } from "../../src/config/paths.ts";
import { readSettings } from "../../src/config/settings.ts";
import { EventLog } from "../../src/events/eventLog.ts";
import type { EventKind, StoredEvent } from "../../src/events/registry.ts";
import { Budget } from "../../src/llm/budget.ts";
import type { MissionClock } from "../../src/mission/clock.ts";
import { type MissionAgent, MissionService } from "../../src/mission/missionService.ts";
import { type Db, openDatabase } from "../../src/store/database.ts";
import type { AppError } from "../../src/util/errors.ts";
import { tempDataDir } from "../helpers/daemon.ts";

// Mission unit tests: a fake clock drives heartbeats, while the data directory, SQLite, the task and session
// stores, the event log and the budget are the real ones. Only the model's work is scripted: a test ends a
// cycle's task when it wants, with the reply (or error) it wants.

export const START = Date.parse("2026-03-02T09:00:00.000Z");

/** Timers fire in time order as the test advances the clock; each firing lets promises settle. */
export class FakeClock implements MissionClock {
  current = START;
  readonly #timers = new Map<number, { at: number; fn: () => void }>();
  #seq = 0;

  now = (): number => this.current;

  setTimer = (fn: () => void, ms: number): unknown => {
    this.#seq += 1;
    this.#timers.set(this.#seq, { at: this.current + ms, fn });
    return this.#seq;
  };

  clearTimer = (handle: unknown): void => {
    this.#timers.delete(handle as number);
  };

  get pending(): number {
    return this.#timers.size;
  }

  async advance(ms: number): Promise<void> {
    const end = this.current + ms;
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const entry of this.#timers) if (entry[1].at <= end && (!next || entry[1].at < next[1].at)) next = entry;
      if (!next) break;
      this.#timers.delete(next[0]);
      this.current = Math.max(this.current, next[1].at);
      next[1].fn();
      await settle();
    }
    this.current = end;
    await settle();
  }
}

export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** The task side of the mission over the real stores; the test decides when and how each task ends. */
export class ScriptedAgent implements MissionAgent {
  readonly tasks: TaskStore;
  readonly sessions: SessionStore;
  readonly events: EventLog;
  readonly submitted: Array<SubmitRequest & { task_id: string }> = [];
  readonly #waiters = new Map<string, { resolve: (task: TaskRecord) => void; reject: (error: unknown) => void }>();

  constructor(db: Db, events: EventLog) {
    this.tasks = new TaskStore(db);
    this.sessions = new SessionStore(db);
    this.events = events;
  }

  submit(request: SubmitRequest): TaskRecord {
    const session = request.sessionId ? this.sessions.get(request.sessionId) : this.sessions.create();
    const task = this.tasks.create({
      sessionId: session.id,
      message: request.message,
      origin: request.origin,
      ...(request.taskType ? { taskType: request.taskType } : {}),
    });
    this.submitted.push({ ...request, task_id: task.id });
    return this.tasks.transition(task.id, "running");
  }

  wait(taskId: string): Promise<TaskRecord> {
    const task = this.tasks.get(taskId);
    if (FINAL_STATUSES.has(task.status)) return Promise.resolve(task);
    return new Promise((resolve, reject) => this.#waiters.set(taskId, { resolve, reject }));
  }

  report(taskId: string): TaskReport {
    return buildReport(this.tasks.get(taskId), this.events.list({ taskId, limit: 10_000 }));
  }

  /** Ends a task like the task service would: a reply, or a failure with the error waiters get. */
  finish(taskId: string, outcome: { status?: TaskStatus; reply?: string; error?: AppError } = {}): TaskRecord {
    const status = outcome.status ?? (outcome.error ? "failed" : "completed");
    const task = this.tasks.transition(taskId, status, {
      reply: outcome.reply ?? (status === "completed" ? "Step done." : null),
      reason: outcome.error?.message ?? null,
    });
    const waiter = this.#waiters.get(taskId);
    this.#waiters.delete(taskId);
    if (outcome.error) waiter?.reject(outcome.error);
    else waiter?.resolve(task);
    return task;
  }

  lastTask(): string {
    const last = this.submitted.at(-1);
    if (!last) throw new Error("no task was submitted");
    return last.task_id;
  }
}

export interface MissionRig {
  dataDir: string;
  paths: DataPaths;
  db: Db;
  events: EventLog;
  budget: Budget;
  clock: FakeClock;
  agent: ScriptedAgent;
  mission: MissionService;
  /** What the file watcher would do after a hand edit of the file (every watcher the rig's services started). */
  fileChanged(): void;
  /** A new service over the same data directory and database (a daemon restart). */
  restart(): MissionService;
  kinds<K extends EventKind>(...kinds: K[]): StoredEvent<K>[];
  close(): void;
}

export function missionYaml(fields: Record<string, unknown>): string {
  return `${Object.entries(fields)
    .map(([key, value]) => `${key}: ${JSON.stringify(value)}`)
    .join("\n")}\n`;
}

export function createRig(
  options: { file?: Record<string, unknown>; env?: NodeJS.ProcessEnv; dataDir?: string } = {},
): MissionRig {
  const dataDir = options.dataDir ?? tempDataDir("assistant-mission-");
  const paths = dataPaths(dataDir);
  if (options.file) writeFileSync(paths.mission, missionYaml(options.file));
  const db = openDatabase(paths.database);
  const events = new EventLog(db);
  const settings = readSettings(options.env ?? {}); // as the daemon parses its environment
  const budget = new Budget(db, settings);
  const clock = new FakeClock();
  const agent = new ScriptedAgent(db, events);
  const logger = { info: () => {}, warn: () => {}, error: () => {} };
  const watchers = new Set<() => void>();
  const watchFile = (_file: string, onChange: () => void) => {
    watchers.add(onChange);
    return () => watchers.delete(onChange);
  };
  const make = () => new MissionService({ paths, db, events, agent, budget, logger, clock, settings, watchFile });
  const rig: MissionRig = {
    dataDir,
    paths,
    db,
    events,
    budget,
    clock,
    agent,
    mission: make(),
    fileChanged: () => {
      for (const onChange of watchers) onChange();
    },
    restart: () => {
      rig.mission.close();
      rig.mission = make();
      return rig.mission;
    },
    kinds: (...kinds) => events.list({ kinds, limit: 10_000 }),
    close: () => {
      rig.mission.close();
      db.close();
    },
  };
  return rig;
}
