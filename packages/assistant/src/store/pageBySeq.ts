import { DEFAULT_PAGE_LIMIT, decodeSeqCursor, encodeSeqCursor } from "../util/cursor.ts";
import { type Db, statement } from "./database.ts";

// One page of a table's rows, newest first by `seq`, with equality filters (undefined ones are skipped) and the
// shared cursor: the stores of tasks, review queue items and the like all list this way.

export function pageBySeq<R extends { seq: number }>(
  db: Db,
  query: {
    table: string;
    /** Selected columns; must include `seq`. */
    columns: string;
    filters?: Record<string, string | undefined>;
    limit?: number;
    cursor?: string;
  },
): { rows: R[]; next_cursor: string | null } {
  const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
  const after = decodeSeqCursor(query.cursor);
  const where: string[] = [];
  const args: Array<string | number> = [];
  for (const [column, value] of Object.entries(query.filters ?? {})) {
    if (value === undefined) continue;
    where.push(`${column} = ?`);
    args.push(value);
  }
  if (after !== undefined) {
    where.push("seq < ?");
    args.push(after);
  }
  const rows = statement(
    db,
    `SELECT ${query.columns} FROM ${query.table} ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY seq DESC LIMIT ?`,
  ).all(...args, limit + 1) as R[];
  const page = rows.slice(0, limit);
  return { rows: page, next_cursor: rows.length > limit ? encodeSeqCursor(page.at(-1)!.seq) : null };
}
