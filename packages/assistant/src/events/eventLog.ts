import { type Db, statement } from "../store/database.ts";
import { redactValue } from "../util/redact.ts";
import { EVENT_KINDS, type EventKind, type EventPayload, type StoredEvent } from "./registry.ts";

export interface EventScope {
  task_id?: string;
  session_id?: string;
}

export interface EventQuery {
  afterSeq?: number;
  kinds?: EventKind[];
  taskId?: string;
  limit: number;
}

type Listener = (event: StoredEvent) => void;

/** An events table row as SQLite returns it. */
export interface EventRow {
  seq: number;
  kind: EventKind;
  ts: string;
  task_id: string | null;
  session_id: string | null;
  data: string;
}

/**
 * Stores every event (so a client reconnecting with Last-Event-ID gets what it missed) and pushes it to live
 * subscribers. Payloads are validated against the registry and passed through secret redaction before storage.
 */
export class EventLog {
  readonly #db: Db;
  readonly #listeners = new Set<Listener>();
  readonly #insert;

  constructor(db: Db) {
    this.#db = db;
    this.#insert = db.prepare(
      "INSERT INTO events (kind, ts, task_id, session_id, data) VALUES (@kind, @ts, @task_id, @session_id, @data)",
    );
  }

  emit<K extends EventKind>(kind: K, payload: EventPayload<K>, scope: EventScope = {}): StoredEvent {
    const data = redactValue(EVENT_KINDS[kind].parse(payload)) as Record<string, unknown>;
    const ts = new Date().toISOString();
    const info = this.#insert.run({
      kind,
      ts,
      task_id: scope.task_id ?? null,
      session_id: scope.session_id ?? null,
      data: JSON.stringify(data),
    });
    const event: StoredEvent = { id: String(info.lastInsertRowid), kind, ts, ...scopeOf(scope), data };
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch {
        // A failing subscriber (a closed stream) must not break the emitter or other subscribers.
      }
    }
    return event;
  }

  list(query: EventQuery): StoredEvent[] {
    const where: string[] = ["seq > ?"];
    const args: Array<string | number> = [query.afterSeq ?? 0];
    if (query.kinds && query.kinds.length > 0) {
      where.push(`kind IN (${query.kinds.map(() => "?").join(",")})`);
      args.push(...query.kinds);
    }
    if (query.taskId) {
      where.push("task_id = ?");
      args.push(query.taskId);
    }
    const rows = statement(this.#db, `SELECT * FROM events WHERE ${where.join(" AND ")} ORDER BY seq LIMIT ?`).all(
      ...args,
      query.limit,
    ) as EventRow[];
    return rows.map(toEvent);
  }

  latestSeq(): number {
    const row = statement(this.#db, "SELECT MAX(seq) AS seq FROM events").get() as { seq: number | null };
    return row.seq ?? 0;
  }

  subscribe(listener: Listener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}

function scopeOf(scope: EventScope): EventScope {
  const out: EventScope = {};
  if (scope.task_id) out.task_id = scope.task_id;
  if (scope.session_id) out.session_id = scope.session_id;
  return out;
}

export function toEvent(row: EventRow): StoredEvent {
  const scope: EventScope = {};
  if (row.task_id) scope.task_id = row.task_id;
  if (row.session_id) scope.session_id = row.session_id;
  return { id: String(row.seq), kind: row.kind, ts: row.ts, ...scope, data: JSON.parse(row.data) };
}
