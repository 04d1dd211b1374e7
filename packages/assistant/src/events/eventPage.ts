import { type Db, statement } from "../store/database.ts";
import { decodeSeqCursor, encodeSeqCursor, type Page } from "../util/cursor.ts";
import { type EventRow, toEvent } from "./eventLog.ts";
import type { EventKind, StoredEvent } from "./registry.ts";

// Pages of stored events for the views built on the event log (timeline, mission events): newest first, a
// selection of kinds (optionally narrowed by a payload field), optionally only those at or after a time.

export interface EventSelection<K extends EventKind = EventKind> {
  kinds: readonly K[];
  /** Events of this kind count only when their payload field has this value (budget_exhausted by source). */
  where?: { kind: K; field: string; value: string };
}

export function eventPage<K extends EventKind>(
  db: Db,
  selection: EventSelection<K>,
  query: { limit: number; sinceMs?: number; cursor?: string },
): Page<StoredEvent<K>> {
  const before = decodeSeqCursor(query.cursor);
  const args: Array<string | number> = [...selection.kinds];
  let match = `kind IN (${selection.kinds.map(() => "?").join(", ")})`;
  if (selection.where) {
    match = `(${match} OR (kind = ? AND json_extract(data, ?) = ?))`;
    args.push(selection.where.kind, `$.${selection.where.field}`, selection.where.value);
  }
  const where = [match];
  if (query.sinceMs !== undefined) {
    // Stored timestamps are toISOString() (UTC, milliseconds), so they compare as text.
    where.push("ts >= ?");
    args.push(new Date(query.sinceMs).toISOString());
  }
  if (before !== undefined) {
    where.push("seq < ?");
    args.push(before);
  }
  const rows = statement(
    db,
    `SELECT seq, kind, ts, task_id, session_id, data FROM events WHERE ${where.join(" AND ")} ORDER BY seq DESC LIMIT ?`,
  ).all(...args, query.limit + 1) as EventRow[];
  const page = rows.slice(0, query.limit);
  return {
    items: page.map((row) => toEvent<K>(row)),
    next_cursor: rows.length > query.limit ? encodeSeqCursor(page.at(-1)!.seq) : null,
  };
}
