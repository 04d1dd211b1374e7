import { readFileSync, statSync } from "node:fs";
import { ConfigError } from "./errors.ts";

// Config files are small and hand-edited; anything past this is a mistake (wrong file, runaway generator) and
// reading it would only slow the daemon down before failing.
export const MAX_CONFIG_BYTES = 1024 * 1024;

/** The text of a config file, or undefined when it does not exist. Refuses oversized files and non-files. */
export function readConfigText(path: string): string | undefined {
  let size: number;
  try {
    const stat = statSync(path);
    if (!stat.isFile()) throw new ConfigError(path, "", "not a regular file");
    size = stat.size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    if (error instanceof ConfigError) throw error;
    throw new ConfigError(path, "", `cannot read the file (${(error as Error).message})`);
  }
  if (size > MAX_CONFIG_BYTES) tooLarge(path, size);
  let data: Buffer;
  try {
    data = readFileSync(path);
  } catch (error) {
    throw new ConfigError(path, "", `cannot read the file (${(error as Error).message})`);
  }
  if (data.length > MAX_CONFIG_BYTES) return tooLarge(path, data.length); // grew since the stat
  return data.toString("utf8").replace(/^\uFEFF/, "");
}

function tooLarge(path: string, size: number): never {
  throw new ConfigError(
    path,
    "",
    `file is ${size} bytes, larger than the 1 MiB limit for config files; refusing to read it`,
  );
}
