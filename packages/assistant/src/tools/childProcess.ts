import { type ChildProcess, spawn } from "node:child_process";

// Runs one program (never through a shell) in its own process group, so the whole tree it starts can be killed:
// on timeout, on too much output, on cancellation, and after the program exits (background children it left
// behind must not outlive the call). Output is captured up to a cap per stream and handed to a callback as it
// comes. A child that leaves the group on purpose (setsid, a daemonising double fork) escapes the group kill;
// its hold on the output pipes is then cut shortly after the program exits.

export type KillReason = "timeout" | "output" | "aborted";

export interface ProcessTreeOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  /** Bytes kept per stream; passing it kills the tree. */
  maxBytes: number;
  signal?: AbortSignal;
  /** Between SIGTERM and SIGKILL; default 1000 ms. */
  killGraceMs?: number;
  /** Called with each captured chunk (only the part that is kept). */
  onData?: (stream: "stdout" | "stderr", chunk: Buffer) => void;
}

export interface ProcessTreeResult {
  /** Exit code, or null when a signal ended the program. */
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Why the tree was killed, or null when the program ended on its own. */
  killed: KillReason | null;
  /** The stream that passed maxBytes, if any. */
  overflow: "stdout" | "stderr" | null;
  stdout: Buffer;
  stderr: Buffer;
  durationMs: number;
}

/** How long the output pipes may stay open after the program exited and its group was killed. */
const PIPE_GRACE_MS = 1000;

/** Process groups still running: killed if the daemon exits while they run. */
const live = new Set<number>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const pid of live) signalTree(pid, "SIGKILL");
  });
}

/** Sends a signal to the process group led by `pid`; a group that is already gone is not an error. */
export function signalTree(pid: number, signal: NodeJS.Signals): void {
  if (process.platform === "win32") {
    try {
      const killer = spawn("taskkill", ["/pid", String(pid), "/T", "/F"], { stdio: "ignore", windowsHide: true });
      killer.on("error", () => {});
    } catch {
      // nothing more to do
    }
    return;
  }
  try {
    process.kill(-pid, signal);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "ESRCH" && code !== "EPERM") throw error;
  }
}

/**
 * Spawns `file` with `args` (shell: false, stdin ignored, own process group) and resolves when it is done.
 * Rejects only when the program cannot be started (ENOENT, EACCES...).
 */
export function runProcessTree(
  file: string,
  args: readonly string[],
  options: ProcessTreeOptions,
): Promise<ProcessTreeResult> {
  return new Promise((resolvePromise, reject) => {
    const started = Date.now();
    if (options.signal?.aborted) {
      reject(new Error("cancelled before start"));
      return;
    }
    let child: ChildProcess;
    try {
      child = spawn(file, args, {
        cwd: options.cwd,
        env: options.env,
        stdio: ["ignore", "pipe", "pipe"],
        detached: true,
        shell: false,
        windowsHide: true,
      });
    } catch (error) {
      reject(error);
      return;
    }
    const pid = child.pid;
    if (pid !== undefined) {
      live.add(pid);
      installExitHook();
    }
    const grace = options.killGraceMs ?? 1000;
    const kept = { stdout: [] as Buffer[], stderr: [] as Buffer[] };
    const size = { stdout: 0, stderr: 0 };
    let killed: KillReason | null = null;
    let overflow: "stdout" | "stderr" | null = null;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
    let settled = false;
    let escalate: NodeJS.Timeout | undefined;
    let pipeGrace: NodeJS.Timeout | undefined;

    const kill = (reason: KillReason) => {
      if (killed === null) killed = reason;
      if (pid === undefined || exit !== null) return;
      signalTree(pid, "SIGTERM");
      escalate ??= setTimeout(() => signalTree(pid, "SIGKILL"), grace);
    };
    const timer = setTimeout(() => kill("timeout"), options.timeoutMs);
    const onAbort = () => kill("aborted");
    options.signal?.addEventListener("abort", onAbort, { once: true });

    const cleanup = () => {
      clearTimeout(timer);
      clearTimeout(escalate);
      clearTimeout(pipeGrace);
      options.signal?.removeEventListener("abort", onAbort);
      if (pid !== undefined) live.delete(pid);
    };

    const capture = (stream: "stdout" | "stderr") => (chunk: Buffer) => {
      const room = options.maxBytes - size[stream];
      if (room <= 0) {
        if (chunk.length > 0 && overflow === null) {
          overflow = stream;
          kill("output");
        }
        return;
      }
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      kept[stream].push(part);
      size[stream] += part.length;
      options.onData?.(stream, part);
      if (chunk.length > room && overflow === null) {
        overflow = stream;
        kill("output");
      }
    };
    child.stdout?.on("data", capture("stdout"));
    child.stderr?.on("data", capture("stderr"));

    child.on("error", (error) => {
      if (settled) return;
      if (exit === null && pid === undefined) {
        settled = true;
        cleanup();
        reject(error);
      }
    });
    child.on("exit", (code, signal) => {
      exit = { code, signal };
      // Leftover members of the group (background jobs) die with the call.
      if (pid !== undefined) signalTree(pid, "SIGKILL");
      clearTimeout(escalate);
      pipeGrace = setTimeout(() => {
        // Something outside the group still holds the pipes: stop waiting for it.
        child.stdout?.destroy();
        child.stderr?.destroy();
        finish();
      }, PIPE_GRACE_MS);
    });
    const finish = () => {
      if (settled || exit === null) return;
      settled = true;
      cleanup();
      resolvePromise({
        code: exit.code,
        signal: exit.signal,
        killed,
        overflow,
        stdout: Buffer.concat(kept.stdout),
        stderr: Buffer.concat(kept.stderr),
        durationMs: Date.now() - started,
      });
    };
    child.on("close", (code, signal) => {
      exit ??= { code, signal };
      finish();
    });
  });
}
