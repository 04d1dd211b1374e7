import { randomUUID } from "node:crypto";
import { z } from "zod";
import { ENV_VARIABLES } from "../../config/envVariables.ts";
import type { EventLog } from "../../events/eventLog.ts";
import { type Db, statement } from "../../store/database.ts";
import { pageBySeq } from "../../store/pageBySeq.ts";
import type { Page } from "../../util/cursor.ts";
import { AppError } from "../../util/errors.ts";
import { redactValue } from "../../util/redact.ts";
import { type FinalStatus, QUEUE_STATUSES, type QueueStatus } from "./queueStatus.ts";

// The review queue (docs/http-api.md#permissions): a sensitive tool
// call waits here until an operator approves or denies it, or until ASSISTANT_APPROVAL_TIMEOUT_SECS pass.
// `approved`, `denied` and `expired` are final; acting on a final item is a 409. Expiry is stored (expires_at), so
// it holds across restarts: overdue items become `expired` lazily on every read or act and by a sweep timer.

export const MAX_NOTE_CHARS = 2000;
/** Argument strings longer than this are cut in the summary shown to the operator. */
export const SUMMARY_STRING_CHARS = 200;
const SUMMARY_ARRAY_ITEMS = 50;
const SUMMARY_DEPTH = 6;

export const queueItemSchema = z
  .object({
    id: z.string(),
    tool: z.string(),
    /** The call's arguments as JSON: secrets redacted, long strings truncated. */
    arguments_summary: z.string(),
    task_id: z.string().nullable(),
    session_id: z.string().nullable(),
    /** The policy rule that asked for approval. */
    rule: z.string(),
    /** What an "always" approval allows from now on (a persistent allow decision for tool and scope). */
    scope: z.string().nullable(),
    /** What to know before approving, e.g. `replaces the existing file /x (120 bytes)`. */
    notice: z.string().nullable(),
    status: z.enum(QUEUE_STATUSES),
    note: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    expires_at: z.string(),
    resolved_at: z.string().nullable(),
  })
  .meta({ id: "QueueItem" });

export type QueueItem = z.infer<typeof queueItemSchema>;

export interface QueueRequest {
  tool: string;
  arguments: Record<string, unknown>;
  task_id?: string;
  session_id?: string;
  rule: string;
  scope?: string;
  notice?: string;
}

export interface QueueListQuery {
  status?: QueueStatus;
  limit?: number;
  cursor?: string;
}

/** Where the queue reports what happened (the daemon's EventLog). */
export type QueueEvents = Pick<EventLog, "emit">;

export interface ReviewQueueOptions {
  /** ASSISTANT_APPROVAL_TIMEOUT_SECS (config/envVariables.ts); default its default, 900. */
  timeoutSecs?: number;
  events?: QueueEvents;
  /** The clock (tests move it forward). */
  now?: () => Date;
}

interface Row extends QueueItem {
  seq: number;
}

const COLUMNS =
  "seq, id, tool, arguments_summary, task_id, session_id, rule, scope, notice, status, note, created_at, updated_at, expires_at, resolved_at";

/** The arguments as the operator sees them: registered secrets redacted, long values cut, deep nesting elided. */
export function summarizeArguments(args: Record<string, unknown>): string {
  return JSON.stringify(shorten(redactValue(args), 0));
}

function shorten(value: unknown, depth: number): unknown {
  if (typeof value === "string") {
    return value.length > SUMMARY_STRING_CHARS
      ? `${value.slice(0, SUMMARY_STRING_CHARS)}… [${value.length - SUMMARY_STRING_CHARS} more characters]`
      : value;
  }
  if (value === null || typeof value !== "object") return value;
  if (depth >= SUMMARY_DEPTH) return "[nested too deep]";
  if (Array.isArray(value)) {
    const items = value.slice(0, SUMMARY_ARRAY_ITEMS).map((v) => shorten(v, depth + 1));
    if (value.length > SUMMARY_ARRAY_ITEMS) items.push(`[${value.length - SUMMARY_ARRAY_ITEMS} more items]`);
    return items;
  }
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) out[shorten(key, depth) as string] = shorten(v, depth + 1);
  return out;
}

function checkNote(note: string | undefined): string | null {
  if (note === undefined) return null;
  if (note.length > MAX_NOTE_CHARS) {
    throw new AppError("invalid_request", `note: at most ${MAX_NOTE_CHARS} characters`, { field: "body.note" });
  }
  return note;
}

function toItem(row: Row): QueueItem {
  const { seq: _seq, ...item } = row;
  return item;
}

type Waiter = (item: QueueItem) => void;

export class ReviewQueue {
  readonly timeoutSecs: number;
  readonly #db: Db;
  readonly #events: QueueEvents | undefined;
  readonly #now: () => Date;
  readonly #waiters = new Map<string, Set<Waiter>>();
  #sweep: NodeJS.Timeout | undefined;

  constructor(db: Db, options: ReviewQueueOptions = {}) {
    this.#db = db;
    this.#events = options.events;
    this.#now = options.now ?? (() => new Date());
    this.timeoutSecs = options.timeoutSecs ?? ENV_VARIABLES.approvalTimeoutSecs.default;
  }

  /** Queues a tool call for review; it starts `pending` and expires after the timeout. */
  request(input: QueueRequest): QueueItem {
    const now = this.#now();
    const created = now.toISOString();
    const item: QueueItem = {
      id: randomUUID(),
      tool: input.tool,
      arguments_summary: summarizeArguments(input.arguments),
      task_id: input.task_id ?? null,
      session_id: input.session_id ?? null,
      rule: input.rule,
      scope: input.scope ?? null,
      notice: input.notice ?? null,
      status: "pending",
      note: null,
      created_at: created,
      updated_at: created,
      expires_at: new Date(now.getTime() + this.timeoutSecs * 1000).toISOString(),
      resolved_at: null,
    };
    statement(
      this.#db,
      `INSERT INTO review_queue (${COLUMNS.replace("seq, ", "")}) VALUES (@id, @tool, @arguments_summary, @task_id, @session_id, @rule, @scope, @notice, @status, @note, @created_at, @updated_at, @expires_at, @resolved_at)`,
    ).run(item);
    this.#events?.emit(
      "approval_requested",
      {
        id: item.id,
        tool: item.tool,
        rule: item.rule,
        arguments_summary: item.arguments_summary,
        expires_at: item.expires_at,
      },
      scopeOf(item),
    );
    return item;
  }

  get(id: string): QueueItem {
    this.expireDue();
    const row = this.#row(id);
    if (!row) throw new AppError("not_found", `no review queue item ${id}`, { id });
    return toItem(row);
  }

  /** Newest first; `cursor` is the `next_cursor` of the previous page. */
  list(query: QueueListQuery = {}): Page<QueueItem> {
    this.expireDue();
    const { rows, next_cursor } = pageBySeq<Row>(this.#db, {
      table: "review_queue",
      columns: COLUMNS,
      filters: { status: query.status },
      ...(query.limit !== undefined ? { limit: query.limit } : {}),
      ...(query.cursor !== undefined ? { cursor: query.cursor } : {}),
    });
    return { items: rows.map(toItem), next_cursor };
  }

  approve(id: string, note?: string): QueueItem {
    return this.#resolve(id, "approved", checkNote(note), "operator");
  }

  deny(id: string, note?: string): QueueItem {
    return this.#resolve(id, "denied", checkNote(note), "operator");
  }

  expire(id: string, note?: string): QueueItem {
    return this.#resolve(id, "expired", checkNote(note), "operator");
  }

  /** Turns every overdue pending item into `expired`; returns how many. Runs on every read and act. */
  expireDue(): number {
    const now = this.#now().toISOString();
    const due = statement(
      this.#db,
      "SELECT id FROM review_queue WHERE status = 'pending' AND expires_at <= ? ORDER BY seq",
    ).all(now) as Array<{ id: string }>;
    let expired = 0;
    for (const { id } of due) if (this.#transition(id, "expired", null, "timeout")) expired++;
    return expired;
  }

  /**
   * Resolves with the item once it is final (approved, denied or expired, including by timeout). Rejects with the
   * signal's reason when it aborts first.
   */
  waitFor(id: string, signal?: AbortSignal): Promise<QueueItem> {
    let current: QueueItem;
    try {
      current = this.get(id);
    } catch (error) {
      return Promise.reject(error);
    }
    if (current.status !== "pending") return Promise.resolve(current);
    return new Promise<QueueItem>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      let waiters = this.#waiters.get(id);
      if (!waiters) {
        waiters = new Set();
        this.#waiters.set(id, waiters);
      }
      const set = waiters;
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        set.delete(waiter);
        if (set.size === 0) this.#waiters.delete(id);
      };
      const waiter: Waiter = (item) => {
        done();
        resolve(item);
      };
      const onAbort = () => {
        done();
        reject(signal!.reason);
      };
      set.add(waiter);
      signal?.addEventListener("abort", onAbort, { once: true });
      // Wake up when the item falls due, even when no sweep timer runs.
      const wait = Math.max(0, Date.parse(current.expires_at) - this.#now().getTime()) + 5;
      const timer = setTimeout(() => {
        try {
          const item = this.get(id);
          if (item.status !== "pending") waiter(item);
        } catch (error) {
          done();
          reject(error);
        }
      }, wait);
      timer.unref();
    });
  }

  /** Starts the periodic expiry sweep (unref'd: it never keeps the process alive). */
  startSweep(intervalMs = Math.min(30_000, this.timeoutSecs * 1000)): void {
    this.stopSweep();
    this.#sweep = setInterval(() => {
      try {
        this.expireDue();
      } catch {
        // A closed database at shutdown: the next start sweeps again.
      }
    }, intervalMs);
    this.#sweep.unref();
  }

  stopSweep(): void {
    if (this.#sweep) clearInterval(this.#sweep);
    this.#sweep = undefined;
  }

  #row(id: string): Row | undefined {
    return statement(this.#db, `SELECT ${COLUMNS} FROM review_queue WHERE id = ?`).get(id) as Row | undefined;
  }

  #resolve(id: string, status: FinalStatus, note: string | null, by: "operator" | "timeout"): QueueItem {
    this.expireDue();
    const item = this.#transition(id, status, note, by);
    if (item) return item;
    const row = this.#row(id);
    if (!row) throw new AppError("not_found", `no review queue item ${id}`, { id });
    const why = row.note ? ` (${row.note})` : "";
    throw new AppError(
      "conflict",
      `review queue item ${id} is already ${row.status}${why}; only a pending item can change`,
      {
        id,
        status: row.status,
      },
    );
  }

  /** pending -> final, atomically (only one caller wins); emits approval_resolved and wakes waiters. */
  #transition(id: string, status: FinalStatus, note: string | null, by: "operator" | "timeout"): QueueItem | undefined {
    const now = this.#now().toISOString();
    const changed = statement(
      this.#db,
      "UPDATE review_queue SET status = ?, note = ?, updated_at = ?, resolved_at = ? WHERE id = ? AND status = 'pending'",
    ).run(status, note, now, now, id).changes;
    if (changed === 0) return undefined;
    const item = toItem(this.#row(id)!);
    this.#events?.emit("approval_resolved", { id, tool: item.tool, status, note, by }, scopeOf(item));
    for (const waiter of [...(this.#waiters.get(id) ?? [])]) waiter(item);
    return item;
  }
}

function scopeOf(item: QueueItem): { task_id?: string; session_id?: string } {
  return {
    ...(item.task_id ? { task_id: item.task_id } : {}),
    ...(item.session_id ? { session_id: item.session_id } : {}),
  };
}
