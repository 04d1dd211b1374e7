import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { type DataPaths, dataPaths, resolveDataDir } from "../config/paths.ts";
import { readSettingsOf } from "../config/settings.ts";
import { createLogger, type Logger } from "../log/logger.ts";
import { readDaemonInfo, removeDaemonInfo } from "../runtime/daemonInfo.ts";
import { writeFileAtomic } from "../util/atomicWrite.ts";
import { redact } from "../util/redact.ts";
import { EXIT_CONFIG, EXIT_CRASH, EXIT_OK, EXIT_RESTART } from "./exitCodes.ts";

// The background supervisor behind `assistant start`: runs `assistant-daemon` as its child and restarts it after
// a crash with exponential backoff, until the crashes come too often to be worth retrying. A daemon that exits
// with EXIT_RESTART asked for it (`/restart`): it is started again at once and that does not count as a crash.

/**
 * Where another bin of this package starts, in the form this code runs as: the esbuild bundle (dist/, chunks in
 * dist/chunks/) or the TypeScript sources (src/daemon/ -> src/bin/), so a fresh bundle never spawns stale sources.
 */
export function binEntry(name: "assistant-daemon" | "assistant-supervisor"): string {
  const bundle = /^(.*)[\\/]dist(?:[\\/]chunks)?$/.exec(import.meta.dirname);
  return bundle ? join(bundle[1]!, "dist", `${name}.mjs`) : join(import.meta.dirname, "..", "bin", `${name}.ts`);
}

const UP_POLL_MS = 200;
/** The daemon gives itself 10 s to shut down; past this the supervisor stops waiting and kills it. */
const STOP_DEADLINE_MS = 15_000;
const STDERR_TAIL = 8;

// ---- restart policy (pure, so it is tested with an injected clock) ----

export interface RestartPolicy {
  initialDelayMs: number;
  maxDelayMs: number;
  /** A daemon that ran this long before crashing starts the backoff over. */
  healthyResetMs: number;
  maxCrashes: number;
  windowMs: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = {
  initialDelayMs: 1_000,
  maxDelayMs: 30_000,
  healthyResetMs: 60_000,
  maxCrashes: 5,
  windowMs: 5 * 60_000,
};

export interface CrashHistory {
  /** When the crashes inside the window happened (ms since epoch). */
  crashes: number[];
  /** Consecutive crashes since the daemon last ran healthily; drives the backoff exponent. */
  streak: number;
}

export type RestartDecision = { restart: true; delayMs: number } | { restart: false; crashesInWindow: number };

/** Records a crash at `now` of a daemon that ran `uptimeMs`, and decides whether and when to restart it. */
export function decideRestart(
  history: CrashHistory,
  now: number,
  uptimeMs: number,
  policy: RestartPolicy = DEFAULT_RESTART_POLICY,
): { history: CrashHistory; decision: RestartDecision } {
  const crashes = [...history.crashes.filter((t) => now - t < policy.windowMs), now];
  const streak = uptimeMs >= policy.healthyResetMs ? 1 : history.streak + 1;
  const next = { crashes, streak };
  if (crashes.length >= policy.maxCrashes)
    return { history: next, decision: { restart: false, crashesInWindow: crashes.length } };
  const delayMs = Math.min(policy.initialDelayMs * 2 ** (streak - 1), policy.maxDelayMs);
  return { history: next, decision: { restart: true, delayMs } };
}

// ---- state file: lets `assistant stop` find a supervisor between restarts and `assistant status` explain it ----

export type SupervisorPhase = "starting" | "running" | "backoff" | "stopping" | "failed" | "gave_up";

export interface SupervisorState {
  pid: number;
  state: SupervisorPhase;
  started_at: string;
  updated_at: string;
  daemon_pid?: number;
  restarts: number;
  next_restart_at?: string;
  message?: string;
  last_exit?: { code: number | null; signal: string | null; at: string; stderr: string[] };
}

export function supervisorStateFile(paths: Pick<DataPaths, "dataDir">): string {
  return join(paths.dataDir, "supervisor.json");
}

export function readSupervisorState(paths: Pick<DataPaths, "dataDir">): SupervisorState | undefined {
  const file = supervisorStateFile(paths);
  if (!existsSync(file)) return undefined;
  try {
    const value = JSON.parse(readFileSync(file, "utf8")) as Partial<SupervisorState>;
    return typeof value.pid === "number" && typeof value.state === "string" ? (value as SupervisorState) : undefined;
  } catch {
    return undefined; // torn or foreign: the live pid checks decide
  }
}

/** Removes the state file if it still belongs to `pid` (a newer supervisor may have replaced it). */
export function removeSupervisorState(paths: Pick<DataPaths, "dataDir">, pid: number): void {
  if (readSupervisorState(paths)?.pid === pid) rmSync(supervisorStateFile(paths), { force: true });
}

// ---- the supervisor process ----

interface ChildExit {
  pid: number | undefined;
  code: number | null;
  signal: NodeJS.Signals | null;
  /** daemon.json showed this child, so it got through startup. */
  up: boolean;
  stderr: string[];
  error?: Error;
}

/** `assistant-supervisor`: supervises the daemon until told to stop, it stops on its own, or it crashes too often. */
export async function runSupervisor(
  env: NodeJS.ProcessEnv = process.env,
  policy = DEFAULT_RESTART_POLICY,
): Promise<number> {
  // The daemon's start is what `assistant start` waits for: it begins before the supervisor sets itself up (no
  // await until the first runChild takes it over, so nothing it prints or emits is missed).
  let child: ChildProcess | undefined = spawnDaemon(env);
  const paths = dataPaths(resolveDataDir(env));
  // stdout/stderr of this process already are the log file (see startBackground), so no mirror.
  // `assistant start` checked every setting before starting this process.
  let logger: Logger;
  try {
    logger = createLogger({ level: readSettingsOf(env, ["logLevel"]).logLevel, file: paths.logFile });
  } catch (error) {
    child.kill("SIGTERM"); // no daemon without its supervisor
    throw error;
  }
  const startedAt = new Date().toISOString();
  let state: SupervisorState = {
    pid: process.pid,
    state: "starting",
    started_at: startedAt,
    updated_at: startedAt,
    restarts: 0,
  };
  const save = (patch: Partial<SupervisorState>) => {
    state = { ...state, ...patch, updated_at: new Date().toISOString() };
    writeFileAtomic(supervisorStateFile(paths), `${JSON.stringify(state, null, 2)}\n`, 0o600, { durable: false });
  };

  let stopping = false;
  let wake: (() => void) | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info(`supervisor got ${signal}; stopping the daemon`);
    save({ state: "stopping" });
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      setTimeout(() => {
        logger.error(`the daemon did not stop within ${STOP_DEADLINE_MS / 1000} s; killing it`);
        child?.kill("SIGKILL");
      }, STOP_DEADLINE_MS).unref();
    }
    wake?.();
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  process.on("SIGHUP", () => {}); // detached from any terminal: a hangup is not a request to stop

  save({});
  logger.info("supervisor started", { pid: process.pid, data_dir: paths.dataDir });
  let history: CrashHistory = { crashes: [], streak: 0 };
  for (let launch = 1; ; launch++) {
    const launchedAt = Date.now();
    child ??= spawnDaemon(env);
    const exit = await runChild(child, paths, logger, (pid) =>
      save({ state: "running", daemon_pid: pid, next_restart_at: undefined }),
    );
    child = undefined;
    if (exit.pid) removeDaemonInfo(paths.daemonInfo, exit.pid); // a crashed daemon leaves it behind
    const how = exit.error ? `could not be run (${exit.error.message})` : describeExit(exit.code, exit.signal);
    const lastExit = { code: exit.code, signal: exit.signal, at: new Date().toISOString(), stderr: exit.stderr };
    if (stopping) return finish(paths, logger, "supervisor stopped", EXIT_OK);
    if (exit.code === EXIT_OK)
      return finish(paths, logger, "the daemon stopped on its own; supervisor stops too", EXIT_OK);
    if (exit.code === EXIT_RESTART && exit.up) {
      logger.info("the daemon asked to be restarted; starting it again");
      save({ state: "starting", restarts: state.restarts + 1, last_exit: lastExit });
      continue;
    }
    if (exit.code === EXIT_CONFIG || (launch === 1 && !exit.up)) {
      // A start that fails before the daemon was ever up (or that the daemon itself calls unfixable) is reported
      // to the user by `assistant start` at once instead of being retried in the background.
      const message = `the daemon ${how} during startup; not restarting. Fix the cause (see ${paths.logFile}), then run \`assistant start\``;
      logger.error(message);
      save({ state: "failed", message, last_exit: lastExit });
      return exit.code === EXIT_CONFIG ? EXIT_CONFIG : EXIT_CRASH;
    }
    const verdict = decideRestart(history, Date.now(), Date.now() - launchedAt, policy);
    history = verdict.history;
    if (!verdict.decision.restart) {
      const minutes = policy.windowMs / 60_000;
      const message = `the daemon ${how}; it crashed ${verdict.decision.crashesInWindow} times within ${minutes} minutes, so the supervisor gives up. Fix the cause (see ${paths.logFile}), then run \`assistant start\``;
      logger.error(message);
      save({ state: "gave_up", message, last_exit: lastExit });
      return EXIT_CRASH;
    }
    const delay = verdict.decision.delayMs;
    logger.warn(`the daemon ${how}; restarting it in ${delay / 1000} s`, { crashes_in_window: history.crashes.length });
    save({
      state: "backoff",
      restarts: state.restarts + 1,
      next_restart_at: new Date(Date.now() + delay).toISOString(),
      last_exit: lastExit,
    });
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, delay);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    wake = undefined;
    if (stopping) return finish(paths, logger, "supervisor stopped", EXIT_OK);
  }
}

function finish(paths: DataPaths, logger: Logger, message: string, code: number): number {
  logger.info(message);
  removeSupervisorState(paths, process.pid);
  return code;
}

function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  return signal ? `was killed by ${signal}` : `exited with code ${code}`;
}

/**
 * glibc gives each thread that allocates (libuv's pool, V8's workers, SQLite) its own malloc arena, up to 8 per
 * core, each keeping freed memory for itself: under a steady chat load the daemon's resident memory kept growing
 * with a flat V8 heap (bench/soak). Two arenas hold it flat for the same speed; a value set by the person wins.
 */
const DAEMON_MALLOC = { MALLOC_ARENA_MAX: "2" };

function spawnDaemon(env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, [binEntry("assistant-daemon")], {
    env: { ...DAEMON_MALLOC, ...env, ASSISTANT_SUPERVISOR_PID: String(process.pid) },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** Runs one daemon process to its end, copying what it prints outside its logger (startup refusals, crashes). */
function runChild(
  child: ChildProcess,
  paths: DataPaths,
  logger: Logger,
  up: (pid: number) => void,
): Promise<ChildExit> {
  const stderr: string[] = [];
  let closed = 0;
  const copy = (stream: NodeJS.ReadableStream, isStderr: boolean) => {
    // A supervised daemon logs to the file itself (no stderr mirror); what reaches these pipes is what it
    // printed outside its logger, such as the reason a start was refused.
    const lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
    lines.on("line", (line) => {
      if (line.trim() === "") return;
      const text = redact(line);
      if (isStderr) {
        stderr.push(text.replace(/^assistant-daemon: /, ""));
        if (stderr.length > STDERR_TAIL) stderr.shift();
        logger.error(`daemon: ${text}`);
      } else logger.info(`daemon: ${text}`);
    });
    lines.on("close", () => closed++);
  };
  copy(child.stdout!, false);
  copy(child.stderr!, true);

  let isUp = false;
  const checkUp = () => {
    if (isUp || !child.pid || readDaemonInfo(paths.daemonInfo)?.pid !== child.pid) return;
    isUp = true;
    logger.info("daemon is up", { pid: child.pid });
    up(child.pid);
  };
  const poll = setInterval(checkUp, UP_POLL_MS);

  return new Promise((resolve) => {
    let done = false;
    const end = (code: number | null, signal: NodeJS.Signals | null, error?: Error) => {
      if (done) return;
      done = true;
      clearInterval(poll);
      checkUp(); // a crash just after start-up, between two polls, still counts as having been up
      // Let the pipes drain (a grandchild that inherited them must not hold the supervisor up).
      const deadline = Date.now() + 500;
      const wait = () => {
        if (closed >= 2 || Date.now() > deadline) {
          resolve({ pid: child.pid, code, signal, up: isUp, stderr: [...stderr], ...(error ? { error } : {}) });
        } else setTimeout(wait, 20);
      };
      wait();
    };
    child.once("exit", (code, signal) => end(code, signal));
    child.once("error", (error) => end(null, null, error));
  });
}
