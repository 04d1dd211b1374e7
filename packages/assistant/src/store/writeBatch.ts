import type Database from "better-sqlite3";

// Group commit for the daemon's database. Every SQLite commit writes each page it changed to the WAL (two
// pwrite calls a page) and takes and drops the WAL locks (fcntl calls): a chat turn made about seven commits
// (task created, running, the user's message, the reply's event, the answer with the final state, memory's
// bookmark), about 90 pwrite and 70 fcntl calls, and under 200 concurrent sessions that was the largest part
// of the daemon's CPU time per turn. With batching on, the writes of one event-loop turn share one transaction:
// the first write opens it (BEGIN IMMEDIATE) and it commits when the loop turn ends (setImmediate). An answer
// about to leave the daemon waits for that commit (writesCommitted, from the HTTP layer), so nothing a client
// is told about is uncommitted, and the answers of one loop turn share one commit. Pages several turns touch
// (the tails of the events and tasks tables and their indexes) are written once per batch.
//
// Transactions the stores open themselves (db.transaction) run inside the batch as savepoints: they stay
// atomic, and one that fails rolls back alone. A crash loses at most the writes of the loop turn in flight
// (no answer about them has gone out); closing the database commits first.

type Db = Database.Database;

interface Batch {
  begin: Database.Statement;
  commit: Database.Statement;
  open: boolean;
  timer: NodeJS.Immediate | null;
  /** Settled by the commit of the open batch; created when someone waits. */
  committed: { promise: Promise<void>; resolve: () => void; reject: (error: Error) => void } | null;
  onError: (error: Error) => void;
}

const batches = new WeakMap<Db, Batch>();

/** Turns batching on for this connection (the daemon's; short-lived CLI connections keep plain autocommit). */
export function enableWriteBatching(db: Db, onError: (error: Error) => void): void {
  batches.set(db, {
    begin: db.prepare("BEGIN IMMEDIATE"),
    commit: db.prepare("COMMIT"),
    open: false,
    timer: null,
    committed: null,
    onError,
  });
  const close = db.close.bind(db);
  // SQLite rolls an open transaction back on close.
  db.close = () => {
    commitWriteBatch(db);
    return close();
  };
  // The stores' own transactions join the batch (as savepoints) instead of committing on their own.
  const transaction = db.transaction.bind(db);
  db.transaction = ((fn: (...args: never[]) => unknown) => {
    const wrapped = transaction(fn);
    const variants = {
      default: wrapped.default,
      deferred: wrapped.deferred,
      immediate: wrapped.immediate,
      exclusive: wrapped.exclusive,
    };
    return Object.assign((...args: never[]) => {
      joinWriteBatch(db);
      return wrapped(...args);
    }, variants);
  }) as Db["transaction"];
}

/** Called before a write: opens the loop turn's batch unless one (or a store's own transaction) is open. */
export function joinWriteBatch(db: Db): void {
  const batch = batches.get(db);
  if (!batch || db.inTransaction) return;
  batch.begin.run();
  batch.open = true;
  batch.timer ??= setImmediate(() => {
    batch.timer = null;
    try {
      commitWriteBatch(db);
    } catch (error) {
      batch.onError(error as Error);
    }
  });
}

/** Resolves once the writes made so far are committed (at once when none wait); rejects when the commit fails. */
export function writesCommitted(db: Db): Promise<void> | null {
  const batch = batches.get(db);
  if (!batch?.open) return null;
  if (!batch.committed) {
    let resolve!: () => void;
    let reject!: (error: Error) => void;
    const promise = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    batch.committed = { promise, resolve, reject };
  }
  return batch.committed.promise;
}

/**
 * Commits the open batch now. Call it only between statements, never inside a store's own transaction; a
 * commit that fails rolls the batch back and throws (and fails what waits on writesCommitted).
 */
export function commitWriteBatch(db: Db): void {
  const batch = batches.get(db);
  if (!batch?.open) return;
  batch.open = false;
  if (batch.timer) {
    clearImmediate(batch.timer);
    batch.timer = null;
  }
  const waiting = batch.committed;
  batch.committed = null;
  try {
    // A statement that failed with a disk or I/O error may have rolled the whole batch back already.
    if (db.inTransaction) batch.commit.run();
  } catch (error) {
    if (db.inTransaction) db.exec("ROLLBACK");
    waiting?.reject(error as Error);
    throw error;
  }
  waiting?.resolve();
}
