import { spawn } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, statSync } from "node:fs";
import { connect } from "node:net";
import type { Health } from "@assistant/client";
import { effectiveEnv } from "../config/envFile.ts";
import type { DataPaths } from "../config/paths.ts";
import { readSettings, readSettingsOf } from "../config/settings.ts";
import { type DaemonInfo, processAlive, readDaemonInfo } from "../runtime/daemonInfo.ts";
import { AppError } from "../util/errors.ts";
import { VERSION } from "../version.ts";
import { binEntry, readSupervisorState, type SupervisorState, supervisorStateFile } from "./supervisor.ts";

// The CLI side of the daemon's lifecycle (`assistant start|stop|up|status`): find, start, wait for and stop the
// daemon of one data directory. Functions return what happened; the CLI words it.

const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 15_000;
const POLL_MS = 100;
/** `assistant start` looks for daemon.json this often: a read of a small file, so it returns soon after the daemon. */
const START_POLL_MS = 20;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A recorded pid may have been reused by an unrelated process after a crash; never signal one of those. */
function isOurs(pid: number): boolean {
  if (!processAlive(pid)) return false;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("assistant");
  } catch {
    return true;
  }
}

/** How a client reaches a daemon listening on `bind`: a wildcard bind is reached over loopback. */
export function urlFor(bind: string, port: number): string {
  const host = bind === "0.0.0.0" || bind === "::" ? "127.0.0.1" : bind;
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/** The running daemon's URL from daemon.json, else where ASSISTANT_BIND/ASSISTANT_PORT say it would listen. */
export function daemonUrl(paths: DataPaths, env: NodeJS.ProcessEnv): string {
  const info = readDaemonInfo(paths.daemonInfo);
  if (info && processAlive(info.pid)) return urlFor(info.bind, info.port);
  const settings = readSettingsOf(effectiveEnv(paths, env), ["bind", "port"]);
  return urlFor(settings.bind, settings.port);
}

/** /api/health at `url`, or undefined when it does not answer within `timeoutMs`. */
async function healthAt(url: string, timeoutMs: number): Promise<Health | undefined> {
  // Loaded when first needed: `assistant start` spawns the supervisor before it has anything to ask.
  const { AssistantClient } = await import("@assistant/client");
  return new AssistantClient({ baseUrl: url }).getHealth({ timeoutMs }).catch(() => undefined);
}

/** Polls /api/health until it answers or `timeoutMs` passes. */
export async function waitHealthy(url: string, timeoutMs: number): Promise<Health | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const health = await healthAt(url, Math.max(200, Math.min(2_000, deadline - Date.now())));
    if (health) return health;
    if (Date.now() + POLL_MS >= deadline) return undefined;
    await sleep(POLL_MS);
  }
}

/** Whether something accepts TCP connections at the daemon's address. */
function portOpen(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname.replace(/^\[|\]$/g, ""), port: Number(port) });
    const done = (open: boolean) => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

export interface DaemonProbe {
  url: string;
  /** daemon.json, when its pid is running. */
  info?: DaemonInfo;
  health?: Health;
  supervisor?: SupervisorState;
  /** The supervisor's pid when it is still running (between restarts there is no daemon pid). */
  supervisorPid?: number;
}

/** What runs for this data directory right now; stale daemon.json/supervisor.json (dead pids) are removed. */
export async function probeDaemon(paths: DataPaths, env: NodeJS.ProcessEnv): Promise<DaemonProbe> {
  let info = readDaemonInfo(paths.daemonInfo);
  if (info && !isOurs(info.pid)) {
    rmSync(paths.daemonInfo, { force: true });
    info = undefined;
  }
  let supervisor = readSupervisorState(paths);
  if (supervisor && isActive(supervisor) && !isOurs(supervisor.pid)) {
    rmSync(supervisorStateFile(paths), { force: true }); // killed before it could say how it ended
    supervisor = undefined;
  }
  const supervisorPid = [info?.supervisor_pid, supervisor && isActive(supervisor) ? supervisor.pid : undefined].find(
    (pid): pid is number => pid !== undefined && isOurs(pid),
  );
  const url = info ? urlFor(info.bind, info.port) : daemonUrl(paths, env);
  const health = info ? await healthAt(url, 2_000) : undefined;
  return {
    url,
    ...(info ? { info } : {}),
    ...(health ? { health } : {}),
    ...(supervisor ? { supervisor } : {}),
    ...(supervisorPid ? { supervisorPid } : {}),
  };
}

function isActive(state: SupervisorState): boolean {
  return state.state !== "failed" && state.state !== "gave_up";
}

export interface Started {
  url: string;
  pid: number;
  supervisorPid: number;
  version: string;
  logFile: string;
  elapsedMs: number;
}

/** `assistant start`: spawns the detached supervisor and waits until its daemon answers /api/health. */
export async function startBackground(paths: DataPaths, env: NodeJS.ProcessEnv): Promise<Started> {
  const began = Date.now();
  const probe = await probeDaemon(paths, env);
  if (probe.info) {
    const state = probe.health ? `version ${probe.health.version}` : "not answering yet";
    throw new AppError(
      "conflict",
      `a daemon is already running for ${paths.dataDir}: pid ${probe.info.pid} at ${probe.url} (${state}). See \`assistant status\`, or run \`assistant stop\` first to restart it`,
    );
  }
  if (probe.supervisorPid) {
    throw new AppError(
      "conflict",
      `a supervisor (pid ${probe.supervisorPid}) is already restarting the daemon of ${paths.dataDir}; wait for it (\`assistant status\`) or run \`assistant stop\``,
    );
  }
  readSettings(effectiveEnv(paths, env)); // a bad value of any setting is reported here, before anything is spawned

  let logFd: number;
  try {
    mkdirSync(paths.logsDir, { recursive: true, mode: 0o700 });
    logFd = openSync(paths.logFile, "a", 0o600);
  } catch (error) {
    throw new AppError(
      "invalid_request",
      `cannot write to the data directory ${paths.dataDir} (${(error as Error).message}); set ASSISTANT_DATA_DIR to a folder you own`,
    );
  }
  const logOffset = statSync(paths.logFile).size;
  const supervisor = spawn(process.execPath, [binEntry("assistant-supervisor")], {
    detached: true,
    stdio: ["ignore", logFd, logFd],
    env: { ...env, ASSISTANT_DATA_DIR: paths.dataDir },
  });
  closeSync(logFd);
  supervisor.unref();
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  supervisor.once("exit", (code, signal) => (exited = { code, signal }));
  supervisor.once("error", () => (exited = { code: null, signal: null }));

  const deadline = began + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (exited)
      throw new AppError("internal", `the daemon did not start: ${failureReason(paths, supervisor.pid, logOffset)}`);
    const info = readDaemonInfo(paths.daemonInfo);
    if (info && info.supervisor_pid === supervisor.pid && processAlive(info.pid)) {
      const url = urlFor(info.bind, info.port);
      const health = await healthAt(url, 1_000);
      if (health) {
        return {
          url,
          pid: info.pid,
          supervisorPid: supervisor.pid!,
          version: health.version,
          logFile: paths.logFile,
          elapsedMs: Date.now() - began,
        };
      }
    }
    await sleep(START_POLL_MS);
  }
  if (supervisor.pid) process.kill(supervisor.pid, "SIGTERM"); // leave nothing half-started behind
  throw new AppError(
    "internal",
    `the daemon did not answer within ${START_TIMEOUT_MS / 1000} s, so it was stopped. Look at ${paths.logFile}, or run \`assistant start --foreground\` to watch it start`,
  );
}

/** Why a start failed: the daemon's own words kept by the supervisor, else the end of what the log got. */
function failureReason(paths: DataPaths, supervisorPid: number | undefined, logOffset: number): string {
  const state = readSupervisorState(paths);
  const said = state?.pid === supervisorPid ? state?.last_exit?.stderr : undefined;
  let lines = said?.length ? said : [];
  if (lines.length === 0 && existsSync(paths.logFile)) {
    lines = readFileSync(paths.logFile)
      .subarray(logOffset)
      .toString("utf8")
      .trim()
      .split("\n")
      .filter(Boolean)
      .slice(-8);
  }
  return `${lines.length ? lines.join("\n  ") : "no reason was logged"}\n(full log: ${paths.logFile})`;
}

export interface Stopped {
  /** False when nothing was running. */
  running: boolean;
  pid?: number;
  supervisorPid?: number;
  url?: string;
}

/** `assistant stop`: SIGTERM to the supervisor (it stops its daemon) or to an unsupervised daemon, then wait. */
export async function stopDaemon(paths: DataPaths, env: NodeJS.ProcessEnv = {}): Promise<Stopped> {
  const probe = await probeDaemon(paths, env);
  const pid = probe.info?.pid;
  const supervisorPid = probe.supervisorPid;
  if (pid === undefined && supervisorPid === undefined) return { running: false };
  process.kill((supervisorPid ?? pid)!, "SIGTERM");
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  for (;;) {
    const left = [pid, supervisorPid].filter((p): p is number => p !== undefined && processAlive(p));
    if (left.length === 0 && !(probe.info && (await portOpen(probe.url)))) break;
    if (Date.now() > deadline) {
      throw new AppError(
        "internal",
        `the daemon did not stop within ${STOP_TIMEOUT_MS / 1000} s (still running: pid ${left.join(", ") || `? on ${probe.url}`}). See ${paths.logFile}; force it with \`kill -9 ${left.join(" ")}\``,
      );
    }
    await sleep(POLL_MS);
  }
  if (pid !== undefined && readDaemonInfo(paths.daemonInfo)?.pid === pid) rmSync(paths.daemonInfo, { force: true });
  return {
    running: true,
    ...(pid !== undefined ? { pid, url: probe.url } : {}),
    ...(supervisorPid !== undefined ? { supervisorPid } : {}),
  };
}

export interface Up {
  url: string;
  pid: number;
  version: string;
  /** Set when this call started the daemon. */
  started?: Started;
}

/** `assistant up`: start the daemon if needed, wait until healthy, and make sure it is this CLI's version. */
export async function upDaemon(paths: DataPaths, env: NodeJS.ProcessEnv): Promise<Up> {
  let probe = await probeDaemon(paths, env);
  let started: Started | undefined;
  if (!probe.info && probe.supervisorPid) {
    // Between two restarts: the supervisor brings the daemon back by itself.
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (!probe.info && probe.supervisorPid && Date.now() < deadline) {
      await sleep(250);
      probe = await probeDaemon(paths, env);
    }
  }
  if (!probe.info) {
    started = await startBackground(paths, env);
    probe = await probeDaemon(paths, env);
  }
  const health = probe.health ?? (await waitHealthy(probe.url, START_TIMEOUT_MS));
  if (!probe.info || !health) {
    throw new AppError(
      "internal",
      `the daemon${probe.info ? ` (pid ${probe.info.pid})` : ""} does not answer at ${probe.url}. See ${paths.logFile}; restart it with \`assistant stop\` then \`assistant up\``,
    );
  }
  if (health.version !== VERSION) {
    throw new AppError(
      "conflict",
      `the running daemon is version ${health.version} but this CLI is ${VERSION}: run \`assistant stop\`, then \`assistant up\` to start the new version`,
    );
  }
  return { url: probe.url, pid: probe.info.pid, version: health.version, ...(started ? { started } : {}) };
}
