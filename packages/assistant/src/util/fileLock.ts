import { randomBytes } from "node:crypto";
import {
  closeSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { hostname } from "node:os";
import { dirname } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { AppError } from "./errors.ts";

// A cross-process lock for read-modify-write of one file (the CLI and the daemon both write vault.json).
// The lock is a file created with O_EXCL. A lock whose holder died on this host, or that is older than
// `staleMs`, is broken; waiting is bounded by `timeoutMs`. Waiting is asynchronous (timers), so a daemon whose
// vault is held by a CLI keeps answering; the critical section itself is synchronous (a read, an encryption and
// an atomic write, a few milliseconds), so the lock is never held across an await.

export interface LockOptions {
  /** How long to wait for another holder before giving up (default 10 s). */
  timeoutMs?: number;
  /** Age after which a lock is considered abandoned even if its pid looks alive (default 30 s). */
  staleMs?: number;
}

interface LockInfo {
  pid: number;
  host: string;
  token: string;
}

/**
 * Runs `fn` holding the lock. The first attempt is synchronous: when the lock is free, `fn` has run by the
 * time the promise is returned; only a held lock makes it wait.
 */
export async function withFileLock<T>(lockPath: string, fn: () => T, options: LockOptions = {}): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const staleMs = options.staleMs ?? 30_000;
  const mine: LockInfo = { pid: process.pid, host: hostname(), token: randomBytes(12).toString("hex") };
  const content = JSON.stringify(mine);
  const deadline = Date.now() + timeoutMs;
  mkdirSync(dirname(lockPath), { recursive: true, mode: 0o700 }); // the first write may precede the data dir
  for (;;) {
    if (tryCreate(lockPath, content)) break;
    if (breakIfStale(lockPath, staleMs)) continue;
    if (Date.now() >= deadline) {
      const holder = readInfo(lockPath);
      throw new AppError(
        "conflict",
        `${lockPath} is held by another process${holder ? ` (pid ${holder.pid})` : ""}; try again, or delete that file if no assistant process is running`,
      );
    }
    await sleep(5 + Math.floor(Math.random() * 20)); // jitter, so waiters do not retry in lock step
  }
  try {
    return fn();
  } finally {
    // Remove the lock only if it is still ours (someone may have broken it as stale meanwhile).
    if (readInfo(lockPath)?.token === mine.token) rmSync(lockPath, { force: true });
  }
}

function tryCreate(lockPath: string, content: string): boolean {
  let fd: number;
  try {
    fd = openSync(lockPath, "wx", 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
  try {
    writeSync(fd, content);
  } finally {
    closeSync(fd);
  }
  return true;
}

/** Breaks an abandoned lock; true when the caller should retry at once. */
function breakIfStale(lockPath: string, staleMs: number): boolean {
  let seen: string;
  let ageMs: number;
  try {
    seen = readFileSync(lockPath, "utf8");
    ageMs = Date.now() - statSync(lockPath).mtimeMs;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return true; // released meanwhile
    throw error;
  }
  const info = parseInfo(seen);
  // An empty or partial file is a holder between create and write: only its age can make it stale.
  const dead = info !== undefined && info.host === hostname() && !isAlive(info.pid);
  if (!dead && ageMs < staleMs) return false;
  // Move it aside and check that what we moved is what we judged; if a new holder slipped in between our
  // look and the rename, put its lock back.
  const aside = `${lockPath}.${randomBytes(6).toString("hex")}.stale`;
  try {
    renameSync(lockPath, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return true;
    throw error;
  }
  try {
    if (readFileSync(aside, "utf8") === seen) return true;
    try {
      linkSync(aside, lockPath);
    } catch {}
    return false;
  } finally {
    try {
      unlinkSync(aside);
    } catch {}
  }
}

function readInfo(lockPath: string): LockInfo | undefined {
  try {
    return parseInfo(readFileSync(lockPath, "utf8"));
  } catch {
    return undefined;
  }
}

function parseInfo(text: string): LockInfo | undefined {
  try {
    const value = JSON.parse(text) as LockInfo;
    return typeof value.pid === "number" && typeof value.token === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"; // exists, owned by another user
  }
}
