import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import type { DataPaths } from "../config/paths.ts";
import { type Db, statement } from "../store/database.ts";

// What the data directory holds (GET /api/data): its files and folders with their sizes, never their content, and
// how many rows the database keeps of each kind of history.

/** The tables counted, by the name the API gives them. */
export const COUNTED_TABLES = {
  sessions: "sessions",
  messages: "messages",
  tasks: "tasks",
  events: "events",
  memories: "memories",
  schedules: "schedules",
} as const;

/** A folder's size is the sum of the files under it; a walk stops after this many entries (a huge workspace). */
const MAX_WALKED_ENTRIES = 20_000;

const countsSchema = z.object({
  sessions: z.number(),
  messages: z.number(),
  tasks: z.number(),
  events: z.number(),
  memories: z.number(),
  schedules: z.number(),
});
export type DataCounts = z.infer<typeof countsSchema>;

export const dataOverviewSchema = z
  .object({
    data_dir: z.string(),
    files: z.array(
      z.object({
        /** Relative to the data directory; a folder ends with `/`. */
        path: z.string(),
        bytes: z.number(),
        kind: z.enum(["file", "directory"]),
        /** For a folder: whether its walk stopped before the end (its size is then a lower bound). */
        partial: z.boolean(),
      }),
    ),
    counts: countsSchema,
  })
  .meta({ id: "DataOverview" });
export type DataOverview = z.infer<typeof dataOverviewSchema>;

export function countRows(db: Db): DataCounts {
  const count = (table: string) => (statement(db, `SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
  return {
    sessions: count(COUNTED_TABLES.sessions),
    messages: count(COUNTED_TABLES.messages),
    tasks: count(COUNTED_TABLES.tasks),
    events: count(COUNTED_TABLES.events),
    memories: count(COUNTED_TABLES.memories),
    schedules: count(COUNTED_TABLES.schedules),
  };
}

/** The data directory's top-level entries (files by size, folders by the total of their files) and the counts. */
export async function dataOverview(db: Db, paths: DataPaths): Promise<DataOverview> {
  const entries = await readdir(paths.dataDir, { withFileTypes: true }).catch(() => []);
  const files: DataOverview["files"] = [];
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(paths.dataDir, entry.name);
    // Symbolic links are listed by their own size, never followed (they could point anywhere).
    if (entry.isDirectory()) {
      const { bytes, partial } = await folderSize(path);
      files.push({ path: `${entry.name}/`, bytes, kind: "directory", partial });
    } else {
      const stat = await lstat(path).catch(() => undefined);
      if (stat) files.push({ path: entry.name, bytes: stat.size, kind: "file", partial: false });
    }
  }
  return { data_dir: paths.dataDir, files, counts: countRows(db) };
}

async function folderSize(dir: string): Promise<{ bytes: number; partial: boolean }> {
  let bytes = 0;
  let walked = 0;
  const pending = [dir];
  while (pending.length > 0) {
    const current = pending.pop()!;
    const entries = await readdir(current, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (++walked > MAX_WALKED_ENTRIES) return { bytes, partial: true };
      const path = join(current, entry.name);
      if (entry.isDirectory()) pending.push(path);
      else bytes += (await lstat(path).catch(() => undefined))?.size ?? 0;
    }
  }
  return { bytes, partial: false };
}
