// Versioned schema of assistant.db. Append a migration to change the schema; never edit a shipped one.
// `PRAGMA user_version` records how far a database file has been migrated.

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: "events and web sessions",
    sql: `
      CREATE TABLE events (
        seq        INTEGER PRIMARY KEY AUTOINCREMENT,
        kind       TEXT NOT NULL,
        ts         TEXT NOT NULL,
        task_id    TEXT,
        session_id TEXT,
        data       TEXT NOT NULL
      );
      CREATE INDEX events_task ON events(task_id, seq) WHERE task_id IS NOT NULL;
      CREATE INDEX events_kind ON events(kind, seq);

      CREATE TABLE web_sessions (
        token_hash TEXT PRIMARY KEY,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL
      );
    `,
  },
];
