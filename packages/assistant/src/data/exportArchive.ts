import { once } from "node:events";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { PassThrough, type Readable } from "node:stream";
import type { DataPaths } from "../config/paths.ts";
import { type Db, statement } from "../store/database.ts";
import { countRows } from "./inventory.ts";

// The export (GET /api/data/export): a zip of the history and memory as JSON, written while it is sent. Rows are
// read a page at a time between writes (never one open cursor, which would hold the database connection), and the
// next page waits until the client took the previous one, so a large history never sits in memory. What it holds
// is listed in EXPORTED; nothing else of the data directory is read (never the vault, its key or the API token).

/** Rows per read: small enough to keep the event loop free, large enough to keep the archive flowing. */
const PAGE_ROWS = 500;

/** Each table exported, its file in the archive, and whether that file is JSON Lines (one row a line). */
const EXPORTED = [
  { file: "sessions.json", table: "sessions", lines: false },
  { file: "messages.jsonl", table: "messages", lines: true },
  { file: "tasks.json", table: "tasks", lines: false },
  { file: "memory.json", table: "memories", lines: false },
  { file: "schedules.json", table: "schedules", lines: false },
] as const;

const REPORTS_FOLDER = "reports/";

/** The archive's file name for a download on `date`. */
export function exportFileName(date = new Date()): string {
  return `assistant-export-${date.toISOString().slice(0, 10)}.zip`;
}

/**
 * The archive as a stream. fflate (loaded on the first export, so the daemon's start does not load it) deflates
 * each entry as it is pushed; a failure ends the stream with that error.
 */
export async function exportArchive(db: Db, paths: DataPaths, version: string): Promise<Readable> {
  const { Zip, ZipDeflate } = await import("fflate");
  const out = new PassThrough();
  const zip = new Zip((error, chunk, final) => {
    if (error) out.destroy(error);
    else {
      out.write(chunk);
      if (final) out.end();
    }
  });
  const encoder = new TextEncoder();
  /** Waits until the client took what was written, so the archive is never buffered whole. */
  const drained = async () => {
    if (out.writableNeedDrain) await once(out, "drain");
  };

  async function writeTable(file: string, table: string, lines: boolean): Promise<void> {
    const entry = new ZipDeflate(file, { level: 6 });
    zip.add(entry);
    let after = 0;
    let first = true;
    if (!lines) entry.push(encoder.encode("["));
    for (;;) {
      if (out.destroyed) return;
      const rows = statement(
        db,
        `SELECT rowid AS export_rowid_, * FROM ${table} WHERE rowid > ? ORDER BY rowid LIMIT ?`,
      ).all(after, PAGE_ROWS) as Array<Record<string, unknown> & { export_rowid_: number }>;
      if (rows.length === 0) break;
      after = rows.at(-1)!.export_rowid_;
      const text = rows
        .map(({ export_rowid_: _, ...row }) => {
          const json = JSON.stringify(row);
          if (lines) return `${json}\n`;
          const separated = first ? `\n${json}` : `,\n${json}`;
          first = false;
          return separated;
        })
        .join("");
      entry.push(encoder.encode(text));
      await drained();
    }
    entry.push(encoder.encode(lines ? "" : first ? "]\n" : "\n]\n"), true);
  }

  async function writeReports(): Promise<void> {
    const entries = await readdir(paths.reportsDir, { withFileTypes: true }).catch(() => []);
    // Regular files only (a symbolic link is never followed), without the temporary files of atomic writes.
    for (const entry of entries.filter((e) => e.isFile() && !e.name.startsWith("."))) {
      if (out.destroyed) return;
      const content = await readFile(join(paths.reportsDir, entry.name)).catch(() => undefined);
      if (!content) continue;
      const file = new ZipDeflate(`${REPORTS_FOLDER}${entry.name}`, { level: 6 });
      zip.add(file);
      file.push(content, true);
      await drained();
    }
  }

  async function write(): Promise<void> {
    const manifest = new ZipDeflate("manifest.json", { level: 6 });
    zip.add(manifest);
    const about = {
      exported_at: new Date().toISOString(),
      assistant_version: version,
      counts: countRows(db),
      files: [...EXPORTED.map((e) => e.file), REPORTS_FOLDER],
    };
    manifest.push(encoder.encode(`${JSON.stringify(about, null, 2)}\n`), true);
    for (const { file, table, lines } of EXPORTED) await writeTable(file, table, lines);
    await writeReports();
    if (!out.destroyed) zip.end();
  }

  write().catch((error: unknown) => out.destroy(error as Error));
  return out;
}
