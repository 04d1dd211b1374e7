import { appendFileSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { redactValue } from "../util/redact.ts";

// The tools journal (ASSISTANT_TOOLS_JOURNAL_PATH): one JSON line per change a tool made to a file, appended and
// never rewritten, owner-only. It records what changed (path, size, hashes), never the content.

export interface JournalEntry {
  tool: string;
  path: string;
  bytes: number;
  sha256: string;
  previous_sha256: string | null;
  created: boolean;
  task_id: string | null;
  session_id: string | null;
}

export function appendJournal(file: string, entry: JournalEntry): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const line = JSON.stringify(redactValue({ ts: new Date().toISOString(), ...entry }));
  appendFileSync(file, `${line}\n`, { mode: 0o600, flag: "a" });
}
