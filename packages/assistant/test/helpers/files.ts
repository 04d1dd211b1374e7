import { readdirSync } from "node:fs";
import { join } from "node:path";

/** Every file below `dir`, recursively (tests grep them for secrets that must never be written out). */
export function allFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...allFiles(path));
    else out.push(path);
  }
  return out;
}
