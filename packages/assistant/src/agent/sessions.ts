import { randomUUID } from "node:crypto";
import { z } from "zod";
import { type Db, statement } from "../store/database.ts";
import { AppError } from "../util/errors.ts";

// Chat sessions and their messages (SQLite). The short-term context of a reply is read from here, newest first,
// until the context token budget is used.

export const MESSAGE_ROLES = ["user", "assistant", "system", "tool"] as const;
export type MessageRole = (typeof MESSAGE_ROLES)[number];

export const sessionRecordSchema = z
  .object({ id: z.string(), title: z.string().nullable(), created_at: z.string(), updated_at: z.string() })
  .meta({ id: "Session" });

export type SessionRecord = z.infer<typeof sessionRecordSchema>;

export const messageRecordSchema = z
  .object({
    id: z.string(),
    session_id: z.string(),
    seq: z.number(),
    role: z.enum(MESSAGE_ROLES),
    content: z.string(),
    task_type: z.string().nullable(),
    provider: z.string().nullable(),
    model: z.string().nullable(),
    created_at: z.string(),
  })
  .meta({ id: "Message" });

export type MessageRecord = z.infer<typeof messageRecordSchema>;

export interface NewMessage {
  role: MessageRole;
  content: string;
  task_type?: string;
  provider?: string;
  model?: string;
}

export class SessionStore {
  private readonly db: Db;

  private readonly appendInTransaction: (sessionId: string, message: NewMessage) => MessageRecord;

  constructor(db: Db) {
    this.db = db;
    // Compiled once: better-sqlite3 builds a new wrapper on every db.transaction() call.
    this.appendInTransaction = db.transaction((sessionId: string, message: NewMessage) =>
      this.insertMessage(sessionId, message),
    );
  }

  create(title?: string): SessionRecord {
    const now = new Date().toISOString();
    const session = { id: randomUUID(), title: title ?? null, created_at: now, updated_at: now };
    statement(
      this.db,
      "INSERT INTO sessions (id, title, created_at, updated_at) VALUES (@id, @title, @created_at, @updated_at)",
    ).run(session);
    return session;
  }

  /** The session, or a `not_found` error naming the id. */
  get(id: string): SessionRecord {
    const row = statement(this.db, "SELECT id, title, created_at, updated_at FROM sessions WHERE id = ?").get(id) as
      | SessionRecord
      | undefined;
    if (!row) throw new AppError("not_found", `no session with id ${id}`, { session_id: id });
    return row;
  }

  append(sessionId: string, message: NewMessage): MessageRecord {
    return this.appendInTransaction(sessionId, message);
  }

  private insertMessage(sessionId: string, message: NewMessage): MessageRecord {
    const now = new Date().toISOString();
    // `+?`, not `?`: SQLite marks a bare parameter of this MAX() query as one whose value may change the plan and
    // recompiles the statement whenever it is bound (on every call); the unary plus keeps the same index search.
    const { next } = statement(
      this.db,
      "SELECT COALESCE(MAX(seq), 0) + 1 AS next FROM messages WHERE session_id = +?",
    ).get(sessionId) as { next: number };
    const record: MessageRecord = {
      id: randomUUID(),
      session_id: sessionId,
      seq: next,
      role: message.role,
      content: message.content,
      task_type: message.task_type ?? null,
      provider: message.provider ?? null,
      model: message.model ?? null,
      created_at: now,
    };
    statement(
      this.db,
      `INSERT INTO messages (id, session_id, seq, role, content, task_type, provider, model, created_at)
       VALUES (@id, @session_id, @seq, @role, @content, @task_type, @provider, @model, @created_at)`,
    ).run(record);
    statement(this.db, "UPDATE sessions SET updated_at = ? WHERE id = ?").run(now, sessionId);
    return record;
  }

  /** The compaction summary of the session's older messages and the last seq it covers (0: none). */
  summary(sessionId: string): { summary: string | null; through: number } {
    const row = statement(this.db, "SELECT summary, summary_seq FROM sessions WHERE id = ?").get(sessionId) as
      | { summary: string | null; summary_seq: number }
      | undefined;
    return { summary: row?.summary ?? null, through: row?.summary_seq ?? 0 };
  }

  setSummary(sessionId: string, summary: string, through: number): void {
    statement(this.db, "UPDATE sessions SET summary = ?, summary_seq = ? WHERE id = ?").run(
      summary,
      through,
      sessionId,
    );
  }

  /** Messages after `seq`, oldest first (at most `limit`, the newest ones). */
  after(sessionId: string, seq: number, limit = 1000): MessageRecord[] {
    // `+?` as in insertMessage: with bare parameters SQLite recompiles this query on every call (twice a turn).
    const rows = statement(
      this.db,
      "SELECT id, session_id, seq, role, content, task_type, provider, model, created_at FROM messages WHERE session_id = +? AND seq > ? ORDER BY seq DESC LIMIT +?",
    ).all(sessionId, seq, limit) as MessageRecord[];
    return rows.reverse();
  }

  /** Sessions, most recently active first. */
  list(limit = 50): SessionRecord[] {
    return statement(
      this.db,
      "SELECT id, title, created_at, updated_at FROM sessions ORDER BY updated_at DESC, rowid DESC LIMIT ?",
    ).all(limit) as SessionRecord[];
  }

  /** The latest messages, oldest first, whose estimated size fits `maxTokens` (the newest always included). */
  recent(sessionId: string, maxTokens: number, estimate: (text: string) => number): MessageRecord[] {
    const rows = statement(
      this.db,
      "SELECT id, session_id, seq, role, content, task_type, provider, model, created_at FROM messages WHERE session_id = ? ORDER BY seq DESC LIMIT 500",
    ).all(sessionId) as MessageRecord[];
    const kept: MessageRecord[] = [];
    let used = 0;
    for (const row of rows) {
      used += estimate(row.content);
      if (kept.length > 0 && used > maxTokens) break;
      kept.push(row);
    }
    return kept.reverse();
  }
}
