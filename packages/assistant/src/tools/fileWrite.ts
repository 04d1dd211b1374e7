import { createHash, randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  fsyncSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { descriptorPath, openApproved } from "./files.ts";
import { appendJournal } from "./journal.ts";
import { ToolFailure } from "./tool.ts";

// Writing a file the policy approved (write_file and plugins' fs host function): atomic (temp file, fsync,
// rename), mode kept, parents created, the new file checked to sit in the approved directory, and journaled.

export const MAX_WRITE_BYTES = 5 * 1024 * 1024;

export interface WriteOrigin {
  /** Tool name in the journal (write_file, or the plugin tool that wrote). */
  tool: string;
  journalPath: string;
  taskId?: string;
  sessionId?: string;
}

export interface WriteResult {
  created: boolean;
  bytes: number;
}

/** Replaces or creates `path` (resolved and permitted already) with `content`. */
export function writeApprovedFile(path: string, content: string | Uint8Array, origin: WriteOrigin): WriteResult {
  const previous = existing(path);
  const dir = dirname(path);
  try {
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    throw new ToolFailure(`cannot create ${dir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const data = typeof content === "string" ? Buffer.from(content, "utf8") : Buffer.from(content);
  const temp = join(dir, `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`);
  const { fd } = openApproved(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, previous?.mode ?? 0o644);
  try {
    // The new file must sit in the approved directory: a parent swapped for a link after the check is caught.
    const actual = descriptorPath(fd);
    if (actual !== null && dirname(actual) !== dir) throw new ToolFailure(`${dir} changed during the write; refused`);
    let done = 0;
    while (done < data.length) done += writeSync(fd, data, done, data.length - done);
    fsyncSync(fd);
    closeSync(fd);
    renameSync(temp, path);
  } catch (error) {
    try {
      closeSync(fd);
    } catch {
      // already closed
    }
    rmSync(temp, { force: true });
    if (error instanceof ToolFailure) throw error;
    throw new ToolFailure(`cannot write ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const sha256 = createHash("sha256").update(data).digest("hex");
  appendJournal(origin.journalPath, {
    tool: origin.tool,
    path,
    bytes: data.length,
    sha256,
    previous_sha256: previous?.sha256 ?? null,
    created: previous === null,
    task_id: origin.taskId ?? null,
    session_id: origin.sessionId ?? null,
  });
  return { created: previous === null, bytes: data.length };
}

function existing(path: string): { mode: number; sha256: string } | null {
  let stat: ReturnType<typeof lstatSync>;
  try {
    stat = lstatSync(path);
  } catch {
    return null;
  }
  if (stat.isDirectory()) throw new ToolFailure(`${path} is a directory`);
  if (!stat.isFile()) throw new ToolFailure(`${path} is not a regular file`);
  const sha256 = createHash("sha256").update(readFileSync(path)).digest("hex");
  return { mode: stat.mode & 0o777, sha256 };
}
