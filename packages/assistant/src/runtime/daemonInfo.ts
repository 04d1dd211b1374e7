import { existsSync, readFileSync, rmSync } from "node:fs";
import { writeFileAtomic } from "../util/atomicWrite.ts";

/** `daemon.json`: how to reach the running daemon. */
export interface DaemonInfo {
  pid: number;
  port: number;
  bind: string;
  version: string;
  started_at: string;
  /** pid of the supervisor that restarts the daemon after a crash, when started with `assistant start`. */
  supervisor_pid?: number;
}

export function writeDaemonInfo(file: string, info: DaemonInfo): void {
  writeFileAtomic(file, `${JSON.stringify(info, null, 2)}\n`, 0o600, { durable: false });
}

export function readDaemonInfo(file: string): DaemonInfo | undefined {
  if (!existsSync(file)) return undefined;
  try {
    const value = JSON.parse(readFileSync(file, "utf8")) as Partial<DaemonInfo>;
    if (typeof value.pid !== "number" || typeof value.port !== "number" || typeof value.bind !== "string")
      return undefined;
    return value as DaemonInfo;
  } catch {
    return undefined; // a torn or foreign file is treated as "no daemon"; the live checks decide
  }
}

/** Removes daemon.json only if it still describes this process (a newer daemon may have replaced it). */
export function removeDaemonInfo(file: string, pid: number): void {
  if (readDaemonInfo(file)?.pid === pid) rmSync(file, { force: true });
}

/** Whether `pid` is a live process. A zombie (exited, not yet reaped) counts as gone. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return true; // no /proc (macOS, Windows): trust kill 0
  }
}
