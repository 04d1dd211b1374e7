import { rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { EventLog } from "../../src/events/eventLog.ts";
import { checkIntegrity, openDatabase } from "../../src/store/database.ts";
import { MIGRATIONS } from "../../src/store/migrations.ts";
import { tempDataDir } from "../helpers/daemon.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function dbFile(): string {
  const dir = tempDataDir("assistant-store-");
  dirs.push(dir);
  return join(dir, "assistant.db");
}

describe("store", () => {
  it("creates the file 0600 in WAL mode with every migration applied", () => {
    const file = dbFile();
    const db = openDatabase(file);
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(db.pragma("user_version", { simple: true })).toBe(MIGRATIONS.at(-1)!.version);
    expect(db.pragma("busy_timeout", { simple: true })).toBe(5000);
    db.close();
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(checkIntegrity(file)).toEqual({ ok: true, schemaVersion: MIGRATIONS.at(-1)!.version, problems: [] });
  });

  it("applies only pending migrations and keeps data across openings", () => {
    const file = dbFile();
    const first = openDatabase(file, { migrations: MIGRATIONS.slice(0, 1) });
    new EventLog(first).emit("vault_updated", { key: "kept", action: "set" });
    first.close();
    const extra = { version: MIGRATIONS.at(-1)!.version + 1, name: "test table", sql: "CREATE TABLE extra (x)" };
    const second = openDatabase(file, { migrations: [...MIGRATIONS, extra] });
    expect(second.pragma("user_version", { simple: true })).toBe(extra.version);
    expect(new EventLog(second).list({ limit: 10 })[0]!.data).toEqual({ key: "kept", action: "set" });
    second.close();
  });

  it("refuses a database written by a newer version, leaving it untouched", () => {
    const file = dbFile();
    const raw = new Database(file);
    raw.pragma("user_version = 999");
    raw.close();
    expect(() => openDatabase(file)).toThrow(/newer version of the assistant \(schema 999/);
    expect(checkIntegrity(file).schemaVersion).toBe(999);
  });

  it("rolls back a failing migration as a whole", () => {
    const file = dbFile();
    const broken = { version: MIGRATIONS.at(-1)!.version + 1, name: "broken", sql: "CREATE TABLE half (x); NOT SQL" };
    expect(() => openDatabase(file, { migrations: [...MIGRATIONS, broken] })).toThrow(/unreadable|syntax/);
    const db = openDatabase(file);
    expect(db.pragma("user_version", { simple: true })).toBe(MIGRATIONS.at(-1)!.version);
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'half'").get()).toBeUndefined();
    db.close();
  });

  it("reports a file that is not a database", () => {
    const file = dbFile();
    writeFileSync(file, "this is not sqlite at all, just text padding ".repeat(200));
    expect(() => openDatabase(file)).toThrow(/assistant doctor/);
  });
});
