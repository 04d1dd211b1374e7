import { chmodSync, existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { AppError } from "../util/errors.ts";
import { MIGRATIONS, type Migration } from "./migrations.ts";
import { joinWriteBatch } from "./writeBatch.ts";

export type Db = Database.Database;

export interface OpenOptions {
  readonly?: boolean;
  migrations?: Migration[];
}

/**
 * Opens the one SQLite file of the data directory: WAL (readers never block the writer), a busy timeout so the
 * CLI and the daemon can share it, foreign keys on, and pending migrations applied in one transaction each.
 */
export function openDatabase(file: string, options: OpenOptions = {}): Db {
  const migrations = options.migrations ?? MIGRATIONS;
  if (!options.readonly) mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const created = !existsSync(file);
  let db: Db;
  try {
    db = new Database(file, { readonly: options.readonly === true, fileMustExist: options.readonly === true });
  } catch (error) {
    throw new AppError("internal", `cannot open the database ${file}: ${(error as Error).message}`);
  }
  if (created && process.platform !== "win32") chmodSync(file, 0o600);
  try {
    db.pragma("busy_timeout = 5000");
    if (!options.readonly) {
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = NORMAL");
      // Temporary tables, sorts and statement journals in memory, not in files created and deleted under /tmp.
      db.pragma("temp_store = MEMORY");
      // A 4 MB page cache per connection (better-sqlite3 builds SQLite with 16 MB): the cache fills as the
      // file grows and its pages count in the daemon's resident memory; the hot pages (the B-trees' upper levels
      // and the tails of the busy tables) fit in 4 MB, the rest is in the operating system's file cache.
      db.pragma("cache_size = -4000");
      // A checkpoint (copying the WAL into the database, with two fsyncs) every 10,000 pages instead of 1,000:
      // the event loop waits on fewer fsyncs, and pages changed again and again (the tails of the events and
      // tasks tables and their indexes) are copied once per checkpoint. The WAL file is cut back to 16 MB after
      // each one.
      db.pragma("wal_autocheckpoint = 10000");
      db.pragma("journal_size_limit = 16777216");
      db.pragma("foreign_keys = ON");
      migrate(db, file, migrations);
    }
  } catch (error) {
    db.close();
    if (error instanceof AppError) throw error;
    throw new AppError(
      "internal",
      `the database ${file} is unreadable (${(error as Error).message}); run \`assistant doctor\``,
    );
  }
  return db;
}

function migrate(db: Db, file: string, migrations: Migration[]): void {
  const current = db.pragma("user_version", { simple: true }) as number;
  const latest = migrations.at(-1)?.version ?? 0;
  if (current > latest) {
    throw new AppError(
      "internal",
      `the database ${file} was written by a newer version of the assistant (schema ${current}, this build knows ${latest}); upgrade the assistant`,
    );
  }
  for (const migration of migrations) {
    if (migration.version <= current) continue;
    db.transaction(() => {
      db.exec(migration.sql);
      db.pragma(`user_version = ${migration.version}`);
    })();
  }
}

export interface IntegrityReport {
  ok: boolean;
  schemaVersion: number;
  problems: string[];
}

/** `PRAGMA integrity_check` on the file, opened read-only (used by doctor while the daemon may be running). */
export function checkIntegrity(file: string): IntegrityReport {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    db.pragma("busy_timeout = 5000");
    const rows = db.pragma("integrity_check") as Array<{ integrity_check: string }>;
    const problems = rows.map((r) => r.integrity_check).filter((r) => r !== "ok");
    return {
      ok: problems.length === 0,
      schemaVersion: db.pragma("user_version", { simple: true }) as number,
      problems,
    };
  } finally {
    db.close();
  }
}

const statements = new WeakMap<Db, Map<string, Database.Statement>>();

/**
 * A prepared statement, compiled once per database: hot paths (chat turns, budget) skip SQLite's parser. A
 * statement that writes joins the connection's write batch when batching is on (writeBatch.ts).
 */
export function statement(db: Db, sql: string): Database.Statement {
  let cache = statements.get(db);
  if (!cache) {
    cache = new Map();
    statements.set(db, cache);
  }
  let prepared = cache.get(sql);
  if (!prepared) {
    prepared = db.prepare(sql);
    cache.set(sql, prepared);
  }
  if (!prepared.reader) joinWriteBatch(db);
  return prepared;
}
