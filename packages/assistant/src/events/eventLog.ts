import { type Db, statement } from "../store/database.ts";
import { redactValue } from "../util/redact.ts";
import { EVENT_KINDS, type EventKind, type EventPayload, type StoredEvent } from "./registry.ts";

export interface EventScope {
  task_id?: string;
  session_id?: string;
}

export interface EventQuery<K extends EventKind = EventKind> {
  afterSeq?: number;
  /** Only these kinds (the events read back are then typed as these kinds); empty or absent: every kind. */
  kinds?: readonly K[];
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

  constructor(db: Db) {
    this.#db = db;
  }

  emit<K extends EventKind>(kind: K, payload: EventPayload<K>, scope: EventScope = {}): StoredEvent<K> {
    // TypeScript cannot tie the schema looked up by a generic kind to that kind's payload type.
    const data = redactValue(EVENT_KINDS[kind].parse(payload)) as EventPayload<K>;
    const ts = new Date().toISOString();
    const info = statement(
      this.#db,
      "INSERT INTO events (kind, ts, task_id, session_id, data) VALUES (@kind, @ts, @task_id, @session_id, @data)",
    ).run({
      kind,
      ts,
      task_id: scope.task_id ?? null,
      session_id: scope.session_id ?? null,
      data: JSON.stringify(data),
    });
    const event = { id: String(info.lastInsertRowid), kind, ts, ...scopeOf(scope), data } as StoredEvent<K>;
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch {
        // A failing subscriber (a closed stream) must not break the emitter or other subscribers.
      }
    }
    return event;
  }

  list<K extends EventKind = EventKind>(query: EventQuery<K>): StoredEvent<K>[] {
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
    return rows.map((row) => toEvent<K>(row));
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

/**
 * A row as the event it was emitted as (the payload is not parsed again: it was validated against its kind's
 * schema when it was emitted).
 */
export function toEvent<K extends EventKind = EventKind>(row: EventRow): StoredEvent<K> {
  const scope: EventScope = {};
  if (row.task_id) scope.task_id = row.task_id;
  if (row.session_id) scope.session_id = row.session_id;
  return { id: String(row.seq), kind: row.kind, ts: row.ts, ...scope, data: JSON.parse(row.data) } as StoredEvent<K>;
}
