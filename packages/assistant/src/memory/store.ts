import { randomUUID } from "node:crypto";
import { z } from "zod";
import { type Db, statement } from "../store/database.ts";
import { AppError } from "../util/errors.ts";

// The memories table and what hangs off it (text index through triggers, links, learning progress). Dedupe:
// the same content (normalised) is one row whose times_seen grows; a new item of the same kind and subject
// replaces the old content, because the user changed their mind rather than holding both views.

export const MEMORY_KINDS = ["fact", "preference", "person", "project", "decision"] as const;
export type MemoryKind = (typeof MEMORY_KINDS)[number];
export const MEMORY_ORIGINS = ["learning", "tool", "flush"] as const;
export type MemoryOrigin = (typeof MEMORY_ORIGINS)[number];
/** What storing an item did (memory_learned). */
export const MEMORY_ACTIONS = ["created", "updated"] as const;
export type MemoryAction = (typeof MEMORY_ACTIONS)[number];

export const MAX_MEMORY_CHARS = 1000;
export const MAX_SUBJECT_CHARS = 100;

export const memoryRecordSchema = z
  .object({
    id: z.string(),
    seq: z.number(),
    kind: z.enum(MEMORY_KINDS),
    content: z.string(),
    subject: z.string().nullable(),
    origin: z.enum(MEMORY_ORIGINS),
    source: z.object({
      session_id: z.string().nullable(),
      message_id: z.string().nullable(),
      task_id: z.string().nullable(),
    }),
    times_seen: z.number(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: "Memory" });

export type MemoryRecord = z.infer<typeof memoryRecordSchema>;

export interface NewMemory {
  kind: MemoryKind;
  content: string;
  subject?: string | null;
  origin: MemoryOrigin;
  sessionId?: string | null;
  messageId?: string | null;
  taskId?: string | null;
}

interface Row {
  seq: number;
  id: string;
  kind: MemoryKind;
  content: string;
  subject: string | null;
  origin: MemoryOrigin;
  source_session_id: string | null;
  source_message_id: string | null;
  source_task_id: string | null;
  times_seen: number;
  created_at: string;
  updated_at: string;
}

const COLUMNS =
  "seq, id, kind, content, subject, origin, source_session_id, source_message_id, source_task_id, times_seen, created_at, updated_at";

/** Lower case, accents and punctuation dropped, spaces collapsed: "Alice's cat!" and "alices cat" are one item. */
export function normalise(text: string): string {
  return text
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
}

export class MemoryStore {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  get db(): Db {
    return this.#db;
  }

  /** Stores an item, or updates the item it duplicates; says which. */
  upsert(item: NewMemory, now = new Date()): { record: MemoryRecord; action: MemoryAction } {
    const content = item.content.trim().replace(/\s+/g, " ");
    const subject = item.subject?.trim() ? item.subject.trim().slice(0, MAX_SUBJECT_CHARS) : null;
    const key = normalise(content);
    if (!key) throw new AppError("invalid_request", "a memory needs some words", { field: "content" });
    const ts = now.toISOString();
    return this.#db.transaction(() => {
      const same = statement(this.#db, `SELECT ${COLUMNS} FROM memories WHERE dedupe_key = ?`).get(key) as
        | Row
        | undefined;
      const previous =
        same ??
        (subject
          ? (statement(
              this.#db,
              `SELECT ${COLUMNS} FROM memories WHERE kind = ? AND subject = ? COLLATE NOCASE ORDER BY seq DESC LIMIT 1`,
            ).get(item.kind, subject) as Row | undefined)
          : undefined);
      if (previous) {
        const changed = previous.content !== content;
        statement(
          this.#db,
          `UPDATE memories SET content = ?, dedupe_key = ?, subject = COALESCE(?, subject), times_seen = times_seen + 1,
             source_session_id = COALESCE(?, source_session_id), source_message_id = COALESCE(?, source_message_id),
             source_task_id = COALESCE(?, source_task_id), updated_at = ?${changed ? ", vector_dims = NULL" : ""}
           WHERE seq = ?`,
        ).run(
          content,
          key,
          subject,
          item.sessionId ?? null,
          item.messageId ?? null,
          item.taskId ?? null,
          ts,
          previous.seq,
        );
        if (changed) statement(this.#db, "DELETE FROM memory_vectors WHERE seq = ?").run(previous.seq);
        return { record: this.#bySeq(previous.seq)!, action: "updated" as const };
      }
      const id = `mem_${randomUUID().replaceAll("-", "").slice(0, 20)}`;
      const info = statement(
        this.#db,
        `INSERT INTO memories (id, kind, content, subject, dedupe_key, origin, source_session_id, source_message_id,
           source_task_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        id,
        item.kind,
        content,
        subject,
        key,
        item.origin,
        item.sessionId ?? null,
        item.messageId ?? null,
        item.taskId ?? null,
        ts,
        ts,
      );
      return { record: this.#bySeq(Number(info.lastInsertRowid))!, action: "created" as const };
    })();
  }

  get(id: string): MemoryRecord {
    const row = statement(this.#db, `SELECT ${COLUMNS} FROM memories WHERE id = ?`).get(id) as Row | undefined;
    if (!row) throw new AppError("not_found", `no memory with id ${id}`, { id });
    return toRecord(row);
  }

  bySeqs(seqs: readonly number[]): MemoryRecord[] {
    if (seqs.length === 0) return [];
    const rows = statement(
      this.#db,
      `SELECT ${COLUMNS} FROM memories WHERE seq IN (SELECT value FROM json_each(?))`,
    ).all(JSON.stringify(seqs)) as Row[];
    return rows.map(toRecord);
  }

  #bySeq(seq: number): MemoryRecord | undefined {
    const row = statement(this.#db, `SELECT ${COLUMNS} FROM memories WHERE seq = ?`).get(seq) as Row | undefined;
    return row ? toRecord(row) : undefined;
  }

  delete(id: string): MemoryRecord {
    const record = this.get(id);
    statement(this.#db, "DELETE FROM memories WHERE seq = ?").run(record.seq);
    return record;
  }

  /** Removes every memory (links and vectors go with them); learning progress stays, so nothing is re-learned. */
  clear(): number {
    return this.#db.transaction(() => {
      const removed = statement(this.#db, "DELETE FROM memories").run().changes;
      statement(this.#db, "DELETE FROM memory_vectors").run();
      statement(this.#db, "DELETE FROM memory_links").run();
      return removed;
    })();
  }

  /** BM25 text search: rowids best first (bm25 is lower-is-better in SQLite). */
  searchText(ftsQuery: string, limit: number): number[] {
    const rows = statement(
      this.#db,
      "SELECT rowid AS seq FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rank LIMIT ?",
    ).all(ftsQuery, limit) as Array<{ seq: number }>;
    return rows.map((r) => r.seq);
  }

  /** How many memories contain `term` (a normalised word). */
  documentFrequency(term: string): number {
    const row = statement(this.#db, "SELECT doc FROM memories_vocab WHERE term = ?").get(term) as
      | { doc: number }
      | undefined;
    return row?.doc ?? 0;
  }

  link(fromSeq: number, toSeq: number, label: string): void {
    if (fromSeq === toSeq) return;
    const insert = statement(this.#db, "INSERT OR IGNORE INTO memory_links (from_seq, to_seq, label) VALUES (?, ?, ?)");
    insert.run(fromSeq, toSeq, label);
    insert.run(toSeq, fromSeq, label);
  }

  /** Items linked to any of `seqs` (graph expansion), excluding `seqs` themselves. */
  linked(seqs: readonly number[], limit: number): Array<{ seq: number; from: number }> {
    if (seqs.length === 0) return [];
    return statement(
      this.#db,
      `SELECT to_seq AS seq, from_seq AS "from" FROM memory_links
        WHERE from_seq IN (SELECT value FROM json_each(?)) AND to_seq NOT IN (SELECT value FROM json_each(?)) LIMIT ?`,
    ).all(JSON.stringify(seqs), JSON.stringify(seqs), limit) as Array<{ seq: number; from: number }>;
  }

  /** Person and project items, whose subjects link new items that mention them. */
  entities(): Array<{ seq: number; subject: string }> {
    return statement(
      this.#db,
      "SELECT seq, subject FROM memories WHERE kind IN ('person', 'project') AND subject IS NOT NULL",
    ).all() as Array<{ seq: number; subject: string }>;
  }

  recent(limit: number): MemoryRecord[] {
    const rows = statement(this.#db, `SELECT ${COLUMNS} FROM memories ORDER BY updated_at DESC, seq DESC LIMIT ?`).all(
      limit,
    ) as Row[];
    return rows.map(toRecord);
  }

  /** Whether any memory exists: a point read, for every chat turn (counts() reads the whole table). */
  isEmpty(): boolean {
    return statement(this.#db, "SELECT 1 FROM memories LIMIT 1").get() === undefined;
  }

  counts(): { total: number; by_kind: Record<MemoryKind, number>; content_bytes: number; vectors: number } {
    const byKind = Object.fromEntries(MEMORY_KINDS.map((k) => [k, 0])) as Record<MemoryKind, number>;
    const rows = statement(
      this.#db,
      "SELECT kind, COUNT(*) AS n, SUM(LENGTH(CAST(content AS BLOB))) AS bytes FROM memories GROUP BY kind",
    ).all() as Array<{ kind: MemoryKind; n: number; bytes: number }>;
    let total = 0;
    let bytes = 0;
    for (const row of rows) {
      byKind[row.kind] = row.n;
      total += row.n;
      bytes += row.bytes;
    }
    // Every vector has one int8 code; counting them reads the small seq index, not the float vectors.
    const vectors = (statement(this.#db, "SELECT COUNT(*) AS n FROM memory_vector_lists").get() as { n: number }).n;
    return { total, by_kind: byKind, content_bytes: bytes, vectors };
  }

  /** Items still waiting for an embedding, oldest first. */
  unembedded(limit: number): Array<{ seq: number; content: string }> {
    return statement(this.#db, "SELECT seq, content FROM memories WHERE vector_dims IS NULL ORDER BY seq LIMIT ?").all(
      limit,
    ) as Array<{ seq: number; content: string }>;
  }

  /** The last message of a session that learning has read. */
  learnedThrough(sessionId: string): number {
    const row = statement(this.#db, "SELECT learned_seq FROM memory_learning WHERE session_id = ?").get(sessionId) as
      | { learned_seq: number }
      | undefined;
    return row?.learned_seq ?? 0;
  }

  setLearnedThrough(sessionId: string, seq: number): void {
    statement(
      this.#db,
      `INSERT INTO memory_learning (session_id, learned_seq, updated_at) VALUES (?, ?, ?)
         ON CONFLICT(session_id) DO UPDATE SET learned_seq = MAX(learned_seq, excluded.learned_seq),
           updated_at = excluded.updated_at`,
    ).run(sessionId, seq, new Date().toISOString());
  }

  lastLearnedAt(): string | null {
    const row = statement(
      this.#db,
      "SELECT MAX(updated_at) AS at FROM memories WHERE origin IN ('learning', 'flush')",
    ).get() as { at: string | null };
    return row.at;
  }
}

function toRecord(row: Row): MemoryRecord {
  return {
    id: row.id,
    seq: row.seq,
    kind: row.kind,
    content: row.content,
    subject: row.subject,
    origin: row.origin,
    source: {
      session_id: row.source_session_id,
      message_id: row.source_message_id,
      task_id: row.source_task_id,
    },
    times_seen: row.times_seen,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
