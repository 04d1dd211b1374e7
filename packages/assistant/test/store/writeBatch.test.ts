import { rmSync } from "node:fs";
import { join } from "node:path";
import { setImmediate as nextLoopTurn } from "node:timers/promises";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { SessionStore } from "../../src/agent/sessions.ts";
import { EventLog } from "../../src/events/eventLog.ts";
import { type Db, openDatabase, statement } from "../../src/store/database.ts";
import { commitWriteBatch, enableWriteBatching, writesCommitted } from "../../src/store/writeBatch.ts";
import { tempDataDir } from "../helpers/daemon.ts";

// Group commit (store/writeBatch.ts) on a real database file, read back through a second connection as the CLI
// or doctor would.

const dirs: string[] = [];
const open: Db[] = [];
afterEach(() => {
  for (const db of open.splice(0)) if (db.open) db.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function databases(): { daemon: Db; reader: Db; errors: Error[] } {
  const dir = tempDataDir("assistant-batch-");
  dirs.push(dir);
  const file = join(dir, "assistant.db");
  const daemon = openDatabase(file);
  const errors: Error[] = [];
  enableWriteBatching(daemon, (error) => errors.push(error));
  const reader = new Database(file, { readonly: true });
  open.push(daemon, reader);
  return { daemon, reader, errors };
}

const sessionCount = (db: Db) => (db.prepare("SELECT COUNT(*) AS n FROM sessions").get() as { n: number }).n;

describe("write batching", () => {
  it("commits the writes of one event-loop turn together, at the end of the turn", async () => {
    const { daemon, reader, errors } = databases();
    const sessions = new SessionStore(daemon);
    const events = new EventLog(daemon);
    const session = sessions.create();
    sessions.append(session.id, { role: "user", content: "hello" });
    events.emit("vault_updated", { key: "k", action: "set" });
    // Another connection sees nothing yet, the daemon's own connection sees everything.
    expect(sessionCount(reader)).toBe(0);
    expect(sessions.after(session.id, 0)).toHaveLength(1);
    expect(daemon.inTransaction).toBe(true);

    await nextLoopTurn();
    expect(daemon.inTransaction).toBe(false);
    expect(sessionCount(reader)).toBe(1);
    expect(new SessionStore(reader).after(session.id, 0).map((m) => m.content)).toEqual(["hello"]);
    expect(new EventLog(reader).list({ limit: 10 }).map((e) => e.kind)).toEqual(["vault_updated"]);
    expect(errors).toEqual([]);
  });

  it("lets an answer wait for the commit of what it reports", async () => {
    const { daemon, reader } = databases();
    expect(writesCommitted(daemon)).toBeNull(); // nothing written: nothing to wait for
    new SessionStore(daemon).create();
    const committed = writesCommitted(daemon);
    expect(committed).toBeInstanceOf(Promise);
    expect(sessionCount(reader)).toBe(0);
    await committed;
    expect(sessionCount(reader)).toBe(1);
  });

  it("keeps a store's own transaction atomic inside the batch: one that fails rolls back alone", async () => {
    const { daemon, reader } = databases();
    const sessions = new SessionStore(daemon);
    const kept = sessions.create();
    const failing = daemon.transaction(() => {
      sessions.create();
      throw new Error("half-way");
    });
    expect(() => failing()).toThrow("half-way");
    sessions.append(kept.id, { role: "user", content: "after the failure" });
    await writesCommitted(daemon);
    expect(sessionCount(reader)).toBe(1);
    expect(new SessionStore(reader).after(kept.id, 0).map((m) => m.content)).toEqual(["after the failure"]);
  });

  it("commits the open batch when the database is closed", () => {
    const { daemon, reader } = databases();
    new SessionStore(daemon).create();
    daemon.close();
    expect(sessionCount(reader)).toBe(1);
  });

  it("fails the waiting answers when the commit fails, and rolls the whole batch back", async () => {
    const { daemon, reader } = databases();
    new SessionStore(daemon).create(); // opens the batch
    // Checked at commit: a message of a session that does not exist passes its insert and fails the COMMIT.
    daemon.pragma("defer_foreign_keys = ON");
    statement(
      daemon,
      "INSERT INTO messages (id, session_id, seq, role, content, created_at) VALUES ('m', 'nobody', 1, 'user', 'x', 'now')",
    ).run();
    const committed = writesCommitted(daemon)!;
    expect(() => commitWriteBatch(daemon)).toThrow(/FOREIGN KEY/);
    await expect(committed).rejects.toThrow(/FOREIGN KEY/);
    expect(daemon.inTransaction).toBe(false);
    expect(sessionCount(reader)).toBe(0);
  });

  it("leaves connections without batching on autocommit", () => {
    const dir = tempDataDir("assistant-batch-");
    dirs.push(dir);
    const file = join(dir, "assistant.db");
    const cli = openDatabase(file);
    const reader = new Database(file, { readonly: true });
    open.push(cli, reader);
    new SessionStore(cli).create();
    expect(cli.inTransaction).toBe(false);
    expect(sessionCount(reader)).toBe(1);
  });
});
