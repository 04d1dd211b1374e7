import type { EventKind, StoredEvent } from "../events/registry.ts";
import { type Db, statement } from "../store/database.ts";
import { DEFAULT_PAGE_LIMIT, decodeSeqCursor, encodeSeqCursor, type Page } from "../util/cursor.ts";

// The mission's own slice of the event log (GET /api/autonomous-mission/events): the mission_* kinds and the
// budget_exhausted events the mission raised, newest first, optionally only those at or after a time.

export const MISSION_EVENT_KINDS: EventKind[] = [
  "mission_updated",
  "mission_state_changed",
  "mission_heartbeat",
  "mission_cycle_finished",
  "mission_report",
];

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** An RFC 3339 timestamp (with `Z` or an offset) as epoch ms; null when it is not one or names no real time. */
export function parseRfc3339(value: string): number | null {
  if (!RFC3339.test(value)) return null;
  const ms = Date.parse(value.replace(" ", "T"));
  if (Number.isNaN(ms)) return null;
  // Date.parse rolls 2026-02-30 over to March; the written date must survive the round trip.
  const offset = /([+-])(\d{2}):(\d{2})$/.exec(value);
  const shift = offset ? (offset[1] === "-" ? -1 : 1) * (Number(offset[2]) * 60 + Number(offset[3])) * 60_000 : 0;
  return new Date(ms + shift).toISOString().slice(0, 10) === value.slice(0, 10) ? ms : null;
}

interface Row {
  seq: number;
  kind: EventKind;
  ts: string;
  task_id: string | null;
  session_id: string | null;
  data: string;
}

export function listMissionEvents(
  db: Db,
  query: { limit?: number; sinceMs?: number; cursor?: string },
): Page<StoredEvent> {
  const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
  const before = decodeSeqCursor(query.cursor);
  const where = [
    `(kind IN (${MISSION_EVENT_KINDS.map(() => "?").join(", ")}) OR (kind = 'budget_exhausted' AND json_extract(data, '$.source') = 'mission'))`,
  ];
  const args: Array<string | number> = [...MISSION_EVENT_KINDS];
  if (query.sinceMs !== undefined) {
    // Stored timestamps are toISOString() (UTC, ms), so they compare as text.
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
  ).all(...args, limit + 1) as Row[];
  const page = rows.slice(0, limit);
  return {
    items: page.map(toEvent),
    next_cursor: rows.length > limit ? encodeSeqCursor(page.at(-1)!.seq) : null,
  };
}

function toEvent(row: Row): StoredEvent {
  return {
    id: String(row.seq),
    kind: row.kind,
    ts: row.ts,
    ...(row.task_id ? { task_id: row.task_id } : {}),
    ...(row.session_id ? { session_id: row.session_id } : {}),
    data: JSON.parse(row.data) as Record<string, unknown>,
  };
}
