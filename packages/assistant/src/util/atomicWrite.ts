import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";

/**
 * Writes a file so that readers see either the old or the new content, never a half-written one:
 * temp file in the same directory, fsync, rename over the target, fsync the directory.
 * `durable: false` skips both fsyncs (~5 ms) for files that describe running processes (daemon.json,
 * supervisor.json): still atomic for readers, and after a power loss their processes are gone anyway.
 */
export function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  mode = 0o600,
  { durable = true }: { durable?: boolean } = {},
): void {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = join(dir, `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`);
  const fd = openSync(tmp, "wx", mode);
  try {
    const buffer = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    let offset = 0;
    while (offset < buffer.length) offset += writeSync(fd, buffer, offset, buffer.length - offset);
    if (durable) fsyncSync(fd);
    closeSync(fd);
    renameSync(tmp, path);
  } catch (error) {
    try {
      closeSync(fd);
    } catch {}
    rmSync(tmp, { force: true });
    throw error;
  }
  if (durable) syncDir(dir);
}

function syncDir(dir: string): void {
  if (process.platform === "win32") return; // directories cannot be opened for fsync on Windows
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
