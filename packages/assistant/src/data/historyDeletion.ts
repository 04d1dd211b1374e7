import { rmSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import type { DataPaths } from "../config/paths.ts";
import { type Db, statement } from "../store/database.ts";
import { AppError } from "../util/errors.ts";

// Deleting the conversation history (POST /api/data/delete-history, docs/http-api.md#data): every message, every
// task with its queued messages, review-queue items and report files, every event tied to a task or a session, and
// the sessions themselves. Memory, schedules, the mission, decisions, config files and the vault stay.

/** The word the request must carry, so a stray call deletes nothing. */
export const DELETE_CONFIRM_WORD = "delete";

export const historyDeletedSchema = z
  .object({
    sessions: z.number(),
    messages: z.number(),
    tasks: z.number(),
    events: z.number(),
    reports: z.number(),
    /** Sessions kept empty because a schedule or the mission still writes into them. */
    kept_sessions: z.number(),
  })
  .meta({ id: "HistoryDeleted" });
export type HistoryDeleted = z.infer<typeof historyDeletedSchema>;

const ACTIVE = "('queued', 'running', 'waiting_approval')";
const SAFE_ID = /^[\w-]+$/;

/**
 * Deletes the history in one transaction, then the task reports. Refused (409) while a task is queued, running
 * or waiting for approval: its rows are in use. `inUseSessions` are sessions something still writes into (the
 * mission's); schedules' sessions are kept too: they are emptied, not removed.
 */
export function deleteHistory(db: Db, paths: DataPaths, confirm: string, inUseSessions: string[]): HistoryDeleted {
  if (confirm !== DELETE_CONFIRM_WORD) {
    throw new AppError("invalid_request", `confirm must be the word "${DELETE_CONFIRM_WORD}"`, { field: "confirm" });
  }
  const active = (statement(db, `SELECT COUNT(*) AS n FROM tasks WHERE status IN ${ACTIVE}`).get() as { n: number }).n;
  if (active > 0) {
    throw new AppError(
      "conflict",
      `${active} task${active === 1 ? " is" : "s are"} still queued, running or waiting for approval: cancel ${active === 1 ? "it" : "them"} or wait, then delete the history`,
      { active_tasks: active },
    );
  }
  const taskIds = (statement(db, "SELECT id FROM tasks").all() as Array<{ id: string }>).map((row) => row.id);
  const deleted = db.transaction(() => {
    const kept = new Set([
      ...(statement(db, "SELECT DISTINCT session_id FROM schedules").all() as Array<{ session_id: string }>).map(
        (row) => row.session_id,
      ),
      ...inUseSessions,
    ]);
    const messages = statement(db, "DELETE FROM messages").run().changes;
    const tasks = statement(db, "DELETE FROM tasks").run().changes;
    statement(db, "DELETE FROM task_queue").run();
    statement(db, "DELETE FROM review_queue WHERE task_id IS NOT NULL").run();
    const events = statement(db, "DELETE FROM events WHERE task_id IS NOT NULL OR session_id IS NOT NULL").run()
      .changes;
    // Learning's position in each session: the messages it counted are gone, and a kept session numbers its next
    // messages from 1 again, which learning must read.
    statement(db, "DELETE FROM memory_learning").run();
    let sessions = 0;
    let keptSessions = 0;
    for (const { id } of statement(db, "SELECT id FROM sessions").all() as Array<{ id: string }>) {
      if (kept.has(id)) {
        statement(db, "UPDATE sessions SET summary = NULL, summary_seq = 0 WHERE id = ?").run(id);
        keptSessions += 1;
      } else {
        sessions += statement(db, "DELETE FROM sessions WHERE id = ?").run(id).changes;
      }
    }
    return { sessions, messages, tasks, events, kept_sessions: keptSessions };
  })();
  let reports = 0;
  for (const id of taskIds) {
    if (!SAFE_ID.test(id)) continue;
    for (const extension of [".json", ".md"]) {
      const file = join(paths.reportsDir, `${id}${extension}`);
      try {
        rmSync(file);
        reports += 1;
      } catch {
        // No report was written for this task (or it was already removed).
      }
    }
  }
  return { ...deleted, reports };
}
