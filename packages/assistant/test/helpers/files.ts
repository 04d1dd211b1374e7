import { type Dirent, readdirSync } from "node:fs";
import { join } from "node:path";

/**
 * Every regular file below `dir`, recursively (tests grep them for secrets that must never be written out).
 * A folder that disappears during the walk is skipped: a daemon that is still shutting down (gnome-keyring
 * removing its runtime dir) leaves nothing at rest there to scan.
 */
export function allFiles(dir: string): string[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const out: string[] = [];
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...allFiles(path));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}
