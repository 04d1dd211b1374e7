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
  {
    version: 2,
    name: "daemon settings, LLM budget usage, chat sessions",
    sql: `
      -- Settings changed at run time through the API (budget limits...), which outlive a restart.
      CREATE TABLE settings (
        key        TEXT PRIMARY KEY,
        value      TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );

      CREATE TABLE budget_usage (
        session_id TEXT PRIMARY KEY,
        tokens_in  INTEGER NOT NULL DEFAULT 0,
        tokens_out INTEGER NOT NULL DEFAULT 0,
        cost_usd   REAL NOT NULL DEFAULT 0,
        updated_at TEXT NOT NULL
      );

      CREATE TABLE sessions (
        id         TEXT PRIMARY KEY,
        title      TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );

      CREATE TABLE messages (
        id         TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        seq        INTEGER NOT NULL,
        role       TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'system', 'tool')),
        content    TEXT NOT NULL,
        task_type  TEXT,
        provider   TEXT,
        model      TEXT,
        created_at TEXT NOT NULL,
        UNIQUE (session_id, seq)
      );
    `,
  },
  {
    version: 3,
    name: "review queue and persistent permission decisions",
    sql: `
      -- Sensitive tool calls waiting for an operator (docs/http-api.md#permissions). seq orders the list (newest
      -- first) and is the pagination cursor; expires_at is stored so expiry survives a restart.
      CREATE TABLE review_queue (
        seq               INTEGER PRIMARY KEY AUTOINCREMENT,
        id                TEXT NOT NULL UNIQUE,
        tool              TEXT NOT NULL,
        arguments_summary TEXT NOT NULL,
        task_id           TEXT,
        session_id        TEXT,
        rule              TEXT NOT NULL,
        status            TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'expired')),
        note              TEXT,
        created_at        TEXT NOT NULL,
        updated_at        TEXT NOT NULL,
        expires_at        TEXT NOT NULL,
        resolved_at       TEXT
      );
      CREATE INDEX review_queue_status ON review_queue(status, seq);
      CREATE INDEX review_queue_due ON review_queue(expires_at) WHERE status = 'pending';

      -- Persistent allow/deny rules by tool and scope.
      CREATE TABLE permission_decisions (
        seq        INTEGER PRIMARY KEY AUTOINCREMENT,
        id         TEXT NOT NULL UNIQUE,
        tool       TEXT NOT NULL,
        scope      TEXT NOT NULL,
        effect     TEXT NOT NULL CHECK (effect IN ('allow', 'deny')),
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (tool, scope)
      );
    `,
  },
  {
    version: 4,
    name: "tasks, their message queues and session summaries",
    sql: `
      -- Agent tasks (docs/agent.md#tasks): queued -> running -> (waiting_approval <-> running) -> completed |
      -- failed | cancelled. seq orders lists (newest first) and is the cursor. parent_id links sub-agent tasks.
      CREATE TABLE tasks (
        seq         INTEGER PRIMARY KEY AUTOINCREMENT,
        id          TEXT NOT NULL UNIQUE,
        session_id  TEXT NOT NULL,
        parent_id   TEXT,
        origin      TEXT NOT NULL,
        message     TEXT NOT NULL,
        task_type   TEXT,
        status      TEXT NOT NULL CHECK (status IN ('queued', 'running', 'waiting_approval', 'completed', 'failed', 'cancelled')),
        reason      TEXT,
        reply       TEXT,
        rounds      INTEGER NOT NULL DEFAULT 0,
        provider    TEXT,
        model       TEXT,
        input_tokens  INTEGER NOT NULL DEFAULT 0,
        output_tokens INTEGER NOT NULL DEFAULT 0,
        cost_usd    REAL NOT NULL DEFAULT 0,
        created_at  TEXT NOT NULL,
        updated_at  TEXT NOT NULL,
        started_at  TEXT,
        finished_at TEXT
      );
      CREATE INDEX tasks_status ON tasks(status, seq);
      CREATE INDEX tasks_session ON tasks(session_id, seq);
      CREATE INDEX tasks_parent ON tasks(parent_id) WHERE parent_id IS NOT NULL;

      -- Messages sent to a running task (docs/agent.md#steering-and-follow-up): steering is injected after the current
      -- LLM turn, follow_up runs after the current work unit. applied_at is set when delivered.
      CREATE TABLE task_queue (
        seq        INTEGER PRIMARY KEY AUTOINCREMENT,
        id         TEXT NOT NULL UNIQUE,
        task_id    TEXT NOT NULL,
        mode       TEXT NOT NULL CHECK (mode IN ('steering', 'follow_up')),
        text       TEXT NOT NULL,
        created_at TEXT NOT NULL,
        applied_at TEXT
      );
      CREATE INDEX task_queue_pending ON task_queue(task_id, mode, seq) WHERE applied_at IS NULL;

      -- Compaction: the summary of a session's older messages (through summary_seq) replaces them in prompts.
      ALTER TABLE sessions ADD COLUMN summary TEXT;
      ALTER TABLE sessions ADD COLUMN summary_seq INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 5,
    name: "plugin reputation",
    sql: `
      -- One row per plugin that has run (docs/plugins.md#reputation): the outcome counts, the score derived from
      -- them, and whether reputation switched the plugin off (and why). Reset puts the row back to a clean start.
      CREATE TABLE plugin_reputation (
        plugin_id      TEXT PRIMARY KEY,
        score          REAL NOT NULL,
        successes      INTEGER NOT NULL DEFAULT 0,
        failures       INTEGER NOT NULL DEFAULT 0,
        timeouts       INTEGER NOT NULL DEFAULT 0,
        traps          INTEGER NOT NULL DEFAULT 0,
        denied         INTEGER NOT NULL DEFAULT 0,
        feedback_up    INTEGER NOT NULL DEFAULT 0,
        feedback_down  INTEGER NOT NULL DEFAULT 0,
        disabled       INTEGER NOT NULL DEFAULT 0,
        disabled_reason TEXT,
        updated_at     TEXT NOT NULL
      );
    `,
  },
  {
    version: 6,
    name: "second-brain memory",
    sql: `
      -- Durable memories (facts, preferences, people, projects, decisions) learned from conversations or stored
      -- by the remember tool. dedupe_key is the normalised content of the item, so learning the same thing again
      -- updates it instead of adding a copy; the source says where it was learned. seq is the rowid the text
      -- index and the vector index (a sqlite-vec table made at run time, sized by the embedder) refer to.
      CREATE TABLE memories (
        seq               INTEGER PRIMARY KEY AUTOINCREMENT,
        id                TEXT NOT NULL UNIQUE,
        kind              TEXT NOT NULL CHECK (kind IN ('fact', 'preference', 'person', 'project', 'decision')),
        content           TEXT NOT NULL,
        -- What the item is about ("favourite colour", "Alice"): a new item of the same kind and subject
        -- replaces the old content (the user changed their mind) instead of contradicting it.
        subject           TEXT,
        dedupe_key        TEXT NOT NULL UNIQUE,
        origin            TEXT NOT NULL CHECK (origin IN ('learning', 'tool', 'flush')),
        source_session_id TEXT,
        source_message_id TEXT,
        source_task_id    TEXT,
        times_seen        INTEGER NOT NULL DEFAULT 1,
        -- Length of the stored embedding; null until the embedder has embedded this item.
        vector_dims       INTEGER,
        created_at        TEXT NOT NULL,
        updated_at        TEXT NOT NULL
      );
      CREATE INDEX memories_updated ON memories(updated_at);
      CREATE INDEX memories_kind ON memories(kind, seq);
      CREATE INDEX memories_subject ON memories(kind, subject) WHERE subject IS NOT NULL;
      CREATE INDEX memories_unembedded ON memories(seq) WHERE vector_dims IS NULL;

      -- Float embeddings (sqlite-vec distance functions read these blobs): exact search in small stores, the
      -- final ranking in large ones.
      CREATE TABLE memory_vectors (
        seq       INTEGER PRIMARY KEY REFERENCES memories(seq) ON DELETE CASCADE,
        embedding BLOB NOT NULL
      );
      -- The inverted-file index of large stores: an int8 code of every vector, clustered by its list (the nearest
      -- centroid; -1 until centroids are trained), so a query reads the few lists closest to it as ranges.
      CREATE TABLE memory_vector_lists (
        list INTEGER NOT NULL,
        seq  INTEGER NOT NULL REFERENCES memory_vectors(seq) ON DELETE CASCADE,
        code BLOB NOT NULL,
        PRIMARY KEY (list, seq)
      ) WITHOUT ROWID;
      CREATE INDEX memory_vector_lists_seq ON memory_vector_lists(seq);
      CREATE TABLE memory_vector_centroids (
        list     INTEGER PRIMARY KEY,
        centroid BLOB NOT NULL
      );

      -- BM25 text search over the memories, kept in step by triggers.
      CREATE VIRTUAL TABLE memories_fts USING fts5(
        content, content = 'memories', content_rowid = 'seq', tokenize = 'unicode61 remove_diacritics 2'
      );
      -- Document counts per term: search leaves out words so common that ranking them costs more than it tells.
      CREATE VIRTUAL TABLE memories_vocab USING fts5vocab('memories_fts', 'row');
      CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
        INSERT INTO memories_fts (rowid, content) VALUES (new.seq, new.content);
      END;
      CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
        INSERT INTO memories_fts (memories_fts, rowid, content) VALUES ('delete', old.seq, old.content);
      END;
      CREATE TRIGGER memories_fts_update AFTER UPDATE OF content ON memories BEGIN
        INSERT INTO memories_fts (memories_fts, rowid, content) VALUES ('delete', old.seq, old.content);
        INSERT INTO memories_fts (rowid, content) VALUES (new.seq, new.content);
      END;

      -- Links between related memories (same person, project or subject), for graph expansion.
      CREATE TABLE memory_links (
        from_seq INTEGER NOT NULL REFERENCES memories(seq) ON DELETE CASCADE,
        to_seq   INTEGER NOT NULL REFERENCES memories(seq) ON DELETE CASCADE,
        label    TEXT NOT NULL,
        PRIMARY KEY (from_seq, to_seq)
      );
      CREATE INDEX memory_links_to ON memory_links(to_seq);

      -- What learning has already read, per session, so each message is extracted once.
      CREATE TABLE memory_learning (
        session_id  TEXT PRIMARY KEY,
        learned_seq INTEGER NOT NULL,
        updated_at  TEXT NOT NULL
      );
    `,
  },
  {
    version: 7,
    name: "schedules",
    sql: `
      -- Recurring schedules (/schedule create, POST /api/schedules): every interval_secs, or on a cron
      -- expression. next_run_at is stored so a restart neither loses nor repeats a run; running_task_id is set
      -- while a run is in flight (a schedule never overlaps itself). Each schedule has its own chat session, so
      -- its runs share context and its token budget.
      CREATE TABLE schedules (
        seq             INTEGER PRIMARY KEY AUTOINCREMENT,
        id              TEXT NOT NULL UNIQUE,
        name            TEXT NOT NULL,
        description     TEXT NOT NULL,
        interval_secs   INTEGER,
        cron            TEXT,
        task_type       TEXT,
        session_id      TEXT NOT NULL,
        status          TEXT NOT NULL CHECK (status IN ('active', 'paused')),
        status_reason   TEXT,
        next_run_at     TEXT NOT NULL,
        last_run_at     TEXT,
        last_task_id    TEXT,
        running_task_id TEXT,
        runs            INTEGER NOT NULL DEFAULT 0,
        created_at      TEXT NOT NULL,
        updated_at      TEXT NOT NULL,
        CHECK ((interval_secs IS NULL) <> (cron IS NULL))
      );
      CREATE INDEX schedules_due ON schedules(status, next_run_at);
    `,
  },
  {
    version: 8,
    name: "schedule time zones",
    sql: `
      -- The IANA time zone a cron schedule is evaluated in (Europe/Paris); null keeps the daemon's local zone,
      -- which is what every schedule used before. Interval schedules have none.
      ALTER TABLE schedules ADD COLUMN timezone TEXT CHECK (timezone IS NULL OR cron IS NOT NULL);
    `,
  },
  {
    version: 9,
    name: "review queue scope and notice",
    sql: `
      -- What "always" would allow from now on (docs/tools.md#persistent-decisions-and-allow_all): the path, command,
      -- host, device interface or tool the call asked about; null for items queued before this version.
      ALTER TABLE review_queue ADD COLUMN scope TEXT;
      -- What the person should know before approving, e.g. that a write replaces an existing file.
      ALTER TABLE review_queue ADD COLUMN notice TEXT;
    `,
  },
];
