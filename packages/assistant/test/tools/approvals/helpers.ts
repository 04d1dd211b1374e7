import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach } from "vitest";
import { EventLog } from "../../../src/events/eventLog.ts";
import type { StoredEvent } from "../../../src/events/registry.ts";
import { type Db, openDatabase } from "../../../src/store/database.ts";
import { tempDataDir } from "../../helpers/daemon.ts";

// A fresh assistant.db per test (migrated like the daemon's), with its event log, closed and removed afterwards.

const opened: Db[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const db of opened.splice(0)) if (db.open) db.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

export interface TestStore {
  dir: string;
  file: string;
  db: Db;
  events: EventLog;
  /** Events of these kinds stored so far, oldest first. */
  eventsOf(...kinds: Array<StoredEvent["kind"]>): StoredEvent[];
  /** Closes the database and opens the same file again (a daemon restart). */
  reopen(): TestStore;
}

function storeAt(dir: string, file: string): TestStore {
  const db = openDatabase(file);
  opened.push(db);
  const events = new EventLog(db);
  const store: TestStore = {
    dir,
    file,
    db,
    events,
    eventsOf: (...kinds) => events.list({ kinds, limit: 1000 }),
    reopen: () => {
      db.close();
      return storeAt(dir, file);
    },
  };
  return store;
}

export function testStore(): TestStore {
  const dir = tempDataDir("assistant-approvals-");
  dirs.push(dir);
  return storeAt(dir, join(dir, "assistant.db"));
}

/** A clock the test moves by hand. */
export function manualClock(start = "2026-01-10T12:00:00.000Z") {
  let now = Date.parse(start);
  return {
    now: () => new Date(now),
    advance(seconds: number) {
      now += seconds * 1000;
    },
  };
}
