import { closeSync, constants, fstatSync, openSync, readlinkSync, readSync, realpathSync, type Stats } from "node:fs";
import { ToolFailure } from "./tool.ts";

// Opening a file the policy already approved by its resolved path. Between the check and the open another
// process could swap a directory on the way for a symlink; so the final name is opened without following links
// and, where the OS says which file a descriptor names (/proc on Linux), that name must still be the approved one.

const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const NONBLOCK = constants.O_NONBLOCK ?? 0; // a FIFO must not block the open

export interface OpenedFile {
  fd: number;
  stat: Stats;
}

export function openApproved(path: string, flags: number, mode?: number): OpenedFile {
  let fd: number;
  try {
    fd = openSync(path, flags | NOFOLLOW | NONBLOCK, mode);
  } catch (error) {
    throw new ToolFailure(openProblem(path, error as NodeJS.ErrnoException));
  }
  try {
    const actual = descriptorPath(fd);
    if (actual !== null && actual !== path) {
      throw new ToolFailure(`${path} changed while it was being opened (now ${actual}); refused`);
    }
    return { fd, stat: fstatSync(fd) };
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/** The path a descriptor names, when the OS can tell (Linux); null elsewhere. */
export function descriptorPath(fd: number): string | null {
  if (process.platform !== "linux") return null;
  try {
    return realpathSync.native(readlinkSync(`/proc/self/fd/${fd}`));
  } catch {
    return null;
  }
}

function openProblem(path: string, error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case "ENOENT":
      return `${path} does not exist`;
    case "EACCES":
    case "EPERM":
      return `${path} is not accessible to the assistant (permission denied by the OS)`;
    case "ELOOP":
      return `${path} is a symbolic link; refused`;
    case "EISDIR":
      return `${path} is a directory`;
    default:
      return `cannot open ${path}: ${error.code ?? error.message}`;
  }
}

/** A short label for what a non-regular file is. */
export function fileKind(stat: Stats): string {
  if (stat.isDirectory()) return "a directory";
  if (stat.isSymbolicLink()) return "a symbolic link";
  if (stat.isFIFO()) return "a named pipe";
  if (stat.isSocket()) return "a socket";
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return "a device";
  return "a regular file";
}

/** Up to `length` bytes of an open file from `position` (fewer at its end). */
export function readAt(fd: number, position: number, length: number): Buffer {
  const buffer = Buffer.alloc(length);
  let done = 0;
  while (done < length) {
    const n = readSync(fd, buffer, done, length - done, position + done);
    if (n === 0) break;
    done += n;
  }
  return buffer.subarray(0, done);
}
