import { randomUUID } from "node:crypto";
import { z } from "zod";
import { type Db, statement } from "../store/database.ts";
import { pageBySeq } from "../store/pageBySeq.ts";
import type { Page } from "../util/cursor.ts";
import { AppError } from "../util/errors.ts";

// Task records and their message queues in SQLite (docs/agent.md#tasks). The store enforces the state machine:
// queued -> running -> (waiting_approval <-> running) -> completed | failed | cancelled; final states are final.

export const TASK_STATUSES = ["queued", "running", "waiting_approval", "completed", "failed", "cancelled"] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];
export const FINAL_STATUSES: ReadonlySet<TaskStatus> = new Set(["completed", "failed", "cancelled"]);
export const DELIVERY_MODES = ["steering", "follow_up"] as const;
export type DeliveryMode = (typeof DELIVERY_MODES)[number];
/** Where a task came from. */
export const TASK_ORIGINS = ["chat", "api", "slash", "subagent", "openai", "schedule", "mission"] as const;
export type TaskOrigin = (typeof TASK_ORIGINS)[number];

export const taskRecordSchema = z
  .object({
    id: z.string(),
    session_id: z.string(),
    parent_id: z.string().nullable(),
    origin: z.enum(TASK_ORIGINS),
    message: z.string(),
    task_type: z.string().nullable(),
    status: z.enum(TASK_STATUSES),
    /** Why it failed or was cancelled (`interrupted` after a daemon crash). */
    reason: z.string().nullable(),
    reply: z.string().nullable(),
    rounds: z.number(),
    /** The provider and model of the last answer. */
    provider: z.string().nullable(),
    model: z.string().nullable(),
    input_tokens: z.number(),
    output_tokens: z.number(),
    cost_usd: z.number(),
    created_at: z.string(),
    updated_at: z.string(),
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
  })
  .meta({ id: "Task" });

export type TaskRecord = z.infer<typeof taskRecordSchema>;

/** What starting a task answers at once: the task runs on, in its session. */
export const taskStartedSchema = z.object({ task_id: z.string(), session_id: z.string() }).meta({ id: "TaskStarted" });

/** A steering or follow-up message waiting for its task. */
export const queuedMessageSchema = z
  .object({
    id: z.string(),
    task_id: z.string(),
    mode: z.enum(DELIVERY_MODES),
    text: z.string(),
    created_at: z.string(),
    applied_at: z.string().nullable(),
  })
  .meta({ id: "QueuedMessage" });

export type QueuedMessage = z.infer<typeof queuedMessageSchema>;

const ALLOWED: Record<TaskStatus, readonly TaskStatus[]> = {
  queued: ["running", "cancelled", "failed"],
  running: ["waiting_approval", "completed", "failed", "cancelled"],
  waiting_approval: ["running", "failed", "cancelled"],
  completed: [],
  failed: [],
  cancelled: [],
};

const COLUMNS =
  "id, session_id, parent_id, origin, message, task_type, status, reason, reply, rounds, provider, model, input_tokens, output_tokens, cost_usd, created_at, updated_at, started_at, finished_at";

/** What a task's end (or a finished work unit) records besides its status. */
export interface TaskOutcome {
  reason?: string | null;
  reply?: string | null;
  rounds?: number;
  provider?: string | null;
  model?: string | null;
  input_tokens?: number;
  output_tokens?: number;
  cost_usd?: number;
}

export class TaskStore {
  readonly #db: Db;

  /** Compiled once: better-sqlite3 builds a new wrapper on every db.transaction() call (several per turn). */
  readonly #inTransaction: (fn: () => unknown) => unknown;

  constructor(db: Db) {
    this.#db = db;
    this.#inTransaction = db.transaction((fn: () => unknown) => fn());
  }

  /** Runs `fn` in one SQLite transaction: the writes of one step of a task commit together (and fast). */
  atomically<T>(fn: () => T): T {
    return this.#inTransaction(fn) as T;
  }

  create(input: {
    sessionId: string;
    message: string;
    taskType?: string;
    origin: TaskOrigin;
    parentId?: string;
  }): TaskRecord {
    const now = new Date().toISOString();
    const task: TaskRecord = {
      id: randomUUID(),
      session_id: input.sessionId,
      parent_id: input.parentId ?? null,
      origin: input.origin,
      message: input.message,
      task_type: input.taskType ?? null,
      status: "queued",
      reason: null,
      reply: null,
      rounds: 0,
      provider: null,
      model: null,
      input_tokens: 0,
      output_tokens: 0,
      cost_usd: 0,
      created_at: now,
      updated_at: now,
      started_at: null,
      finished_at: null,
    };
    statement(
      this.#db,
      `INSERT INTO tasks (${COLUMNS}) VALUES (@id, @session_id, @parent_id, @origin, @message, @task_type, @status, @reason, @reply, @rounds, @provider, @model, @input_tokens, @output_tokens, @cost_usd, @created_at, @updated_at, @started_at, @finished_at)`,
    ).run(task);
    return task;
  }

  find(id: string): TaskRecord | undefined {
    return statement(this.#db, `SELECT ${COLUMNS} FROM tasks WHERE id = ?`).get(id) as TaskRecord | undefined;
  }

  get(id: string): TaskRecord {
    const task = this.find(id);
    if (!task) throw new AppError("not_found", `no task with id ${id}`, { task_id: id });
    return task;
  }

  /** Newest first; optional status and session filters. */
  list(
    query: { status?: TaskStatus; sessionId?: string; parentId?: string; limit?: number; cursor?: string } = {},
  ): Page<TaskRecord> {
    const { rows, next_cursor } = pageBySeq<TaskRecord & { seq: number }>(this.#db, {
      table: "tasks",
      columns: `seq, ${COLUMNS}`,
      filters: { status: query.status, session_id: query.sessionId, parent_id: query.parentId },
      ...(query.limit !== undefined ? { limit: query.limit } : {}),
      ...(query.cursor !== undefined ? { cursor: query.cursor } : {}),
    });
    return { items: rows.map(({ seq: _seq, ...task }) => task), next_cursor };
  }

  /** Tasks in one of these states, oldest first (startup recovery, the scheduler of queued work). */
  withStatus(...statuses: TaskStatus[]): TaskRecord[] {
    const marks = statuses.map(() => "?").join(", ");
    return statement(this.#db, `SELECT ${COLUMNS} FROM tasks WHERE status IN (${marks}) ORDER BY seq`).all(
      ...statuses,
    ) as TaskRecord[];
  }

  /** Moves a task to `next`; a move the state machine does not allow is a 409 naming both states. */
  transition(id: string, next: TaskStatus, fields: TaskOutcome = {}): TaskRecord {
    const task = this.get(id);
    if (!ALLOWED[task.status].includes(next)) {
      throw new AppError("conflict", `task ${id} is ${task.status} and cannot become ${next}`, {
        task_id: id,
        status: task.status,
      });
    }
    const now = new Date().toISOString();
    const defined = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
    const updated: TaskRecord = {
      ...task,
      ...defined,
      status: next,
      updated_at: now,
      started_at: task.started_at ?? (next === "running" ? now : null),
      finished_at: FINAL_STATUSES.has(next) ? now : null,
    };
    statement(
      this.#db,
      "UPDATE tasks SET status = @status, reason = @reason, reply = @reply, rounds = @rounds, provider = @provider, model = @model, input_tokens = @input_tokens, output_tokens = @output_tokens, cost_usd = @cost_usd, updated_at = @updated_at, started_at = @started_at, finished_at = @finished_at WHERE id = @id",
    ).run(updated);
    return updated;
  }

  enqueue(taskId: string, mode: DeliveryMode, text: string): QueuedMessage {
    const message: QueuedMessage = {
      id: randomUUID(),
      task_id: taskId,
      mode,
      text,
      created_at: new Date().toISOString(),
      applied_at: null,
    };
    statement(
      this.#db,
      "INSERT INTO task_queue (id, task_id, mode, text, created_at, applied_at) VALUES (@id, @task_id, @mode, @text, @created_at, @applied_at)",
    ).run(message);
    return message;
  }

  /** Messages not yet delivered, oldest first. */
  pending(taskId: string, mode?: DeliveryMode): QueuedMessage[] {
    return statement(
      this.#db,
      `SELECT id, task_id, mode, text, created_at, applied_at FROM task_queue WHERE task_id = ? AND applied_at IS NULL ${mode ? "AND mode = ?" : ""} ORDER BY seq`,
    ).all(...(mode ? [taskId, mode] : [taskId])) as QueuedMessage[];
  }

  markApplied(id: string): void {
    statement(this.#db, "UPDATE task_queue SET applied_at = ? WHERE id = ? AND applied_at IS NULL").run(
      new Date().toISOString(),
      id,
    );
  }

  /** Drops every undelivered message of a task; returns how many. */
  clearQueue(taskId: string): number {
    return statement(this.#db, "DELETE FROM task_queue WHERE task_id = ? AND applied_at IS NULL").run(taskId).changes;
  }
}
