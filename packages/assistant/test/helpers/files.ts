import { type Dirent, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export interface FileAtRest {
  path: string;
  bytes: Buffer;
}

/**
 * Every regular file below `dir`, recursively, with its bytes (tests grep them for secrets that must never be
 * written out). A file or folder that disappears during the walk is skipped: a running daemon's temporary file
 * renamed into place, or gnome-keyring removing its runtime dir after its session ended, leaves nothing at rest.
 */
export function filesAtRest(dir: string): FileAtRest[] {
  const entries = vanishable(() => readdirSync(dir, { withFileTypes: true })) ?? ([] as Dirent[]);
  const out: FileAtRest[] = [];
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesAtRest(path));
    else if (entry.isFile()) {
      const bytes = vanishable(() => readFileSync(path));
      if (bytes) out.push({ path, bytes });
    }
  }
  return out;
}

function vanishable<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}
