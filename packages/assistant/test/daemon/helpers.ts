import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { cliBin } from "../helpers/daemon.ts";
import { freePort } from "../helpers/system.ts";

export { cliBin, freePort };

// Drives the real `assistant` CLI as a user would, each test with its own data directory and port, and makes sure
// no daemon or supervisor outlives the test.

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface Sandbox {
  dataDir: string;
  port: number;
  env: NodeJS.ProcessEnv;
  cli(args: string[], extraEnv?: NodeJS.ProcessEnv): Promise<CliResult>;
  /** Spawns the CLI without waiting (for `start --foreground`). */
  spawnCli(args: string[]): ChildProcess;
  daemonInfo(): { pid: number; port: number; supervisor_pid?: number } | undefined;
  supervisorState(): { pid: number; state: string; restarts: number; message?: string } | undefined;
  log(): string;
}

const sandboxes: Sandbox[] = [];
const children: ChildProcess[] = [];
const tempDirs: string[] = [];

/** A fresh temporary directory, removed after the test. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "assistant-daemon-test-"));
  tempDirs.push(dir);
  return dir;
}

export function portOpen(port: number): Promise<boolean> {
  return new Promise((resolveOpen) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolveOpen(true);
    });
    socket.once("error", () => resolveOpen(false));
  });
}

export function readJson<T>(file: string): T | undefined {
  try {
    return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as T) : undefined;
  } catch {
    return undefined;
  }
}

export async function sandbox(options: { dataDir?: string; port?: number } = {}): Promise<Sandbox> {
  const dataDir = options.dataDir ?? tempDir();
  const port = options.port ?? (await freePort());
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ASSISTANT_DATA_DIR: dataDir,
    ASSISTANT_PORT: String(port),
    ASSISTANT_LOG: "info",
  };
  const spawnCli = (args: string[], extraEnv: NodeJS.ProcessEnv = {}) => {
    const child = spawn(process.execPath, [cliBin, ...args], {
      env: { ...env, ...extraEnv },
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.push(child);
    return child;
  };
  const box: Sandbox = {
    dataDir,
    port,
    env,
    spawnCli,
    cli: (args, extraEnv) =>
      new Promise((resolveRun) => {
        const child = spawnCli(args, extraEnv);
        let stdout = "";
        let stderr = "";
        child.stdout!.on("data", (d) => (stdout += d));
        child.stderr!.on("data", (d) => (stderr += d));
        child.on("close", (code) => resolveRun({ code, stdout, stderr }));
      }),
    daemonInfo: () => readJson(join(dataDir, "daemon.json")),
    supervisorState: () => readJson(join(dataDir, "supervisor.json")),
    log: () =>
      existsSync(join(dataDir, "logs", "daemon.log")) ? readFileSync(join(dataDir, "logs", "daemon.log"), "utf8") : "",
  };
  sandboxes.push(box);
  return box;
}

export async function waitFor<T>(
  what: string,
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function health(port: number): Promise<{ status: string; version: string } | undefined> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/api/health`, { signal: AbortSignal.timeout(2_000) });
    return response.ok ? ((await response.json()) as { status: string; version: string }) : undefined;
  } catch {
    return undefined;
  }
}

/** Gone or a zombie (orphans are not reaped in this sandbox, and a zombie still answers kill 0). */
export function pidGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return true;
  }
}

function killQuietly(pid: number | undefined): void {
  if (!pid) return;
  try {
    process.kill(pid, "SIGKILL");
  } catch {}
}

/** For afterEach: stop through the CLI as a user would, then kill whatever is left. */
export async function cleanUp(): Promise<void> {
  for (const box of sandboxes.splice(0)) {
    const info = box.daemonInfo();
    const state = box.supervisorState();
    if (info || state) await box.cli(["stop"]);
    killQuietly(state?.pid);
    killQuietly(info?.supervisor_pid);
    killQuietly(info?.pid);
  }
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}
