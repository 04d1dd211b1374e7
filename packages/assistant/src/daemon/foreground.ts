import { accessSync, constants, mkdirSync } from "node:fs";
import { SessionStore } from "../agent/sessions.ts";
import { ensureAuthToken } from "../auth/authToken.ts";
import { LoginCodes } from "../auth/loginCodes.ts";
import { WebSessions } from "../auth/webSessions.ts";
import { createChatServices } from "../chat/services.ts";
import { applyEnvFiles } from "../config/envFile.ts";
import { dataPaths, resolveDataDir } from "../config/paths.ts";
import { readSettings } from "../config/settings.ts";
import { validateConfigFiles } from "../config/validate.ts";
import { EventLog } from "../events/eventLog.ts";
import { createLlmServices } from "../llm/services.ts";
import { createLogger } from "../log/logger.ts";
import { createMemoryServices } from "../memory/services.ts";
import { SYSTEM_CLOCK } from "../mission/clock.ts";
import { watchMissionFile } from "../mission/fileWatch.ts";
import { MissionService } from "../mission/missionService.ts";
import { MessageRouting } from "../plugins/routing.ts";
import { createPluginServices } from "../plugins/services.ts";
import { processAlive, readDaemonInfo, removeDaemonInfo, writeDaemonInfo } from "../runtime/daemonInfo.ts";
import type { Services } from "../runtime/services.ts";
import { Scheduler } from "../scheduler/scheduler.ts";
import { buildApp } from "../server/app.ts";
import { createSkillServices } from "../skills/services.ts";
import { openDatabase } from "../store/database.ts";
import { enableWriteBatching } from "../store/writeBatch.ts";
import { createApprovalServices } from "../tools/approvals/services.ts";
import { createToolServices } from "../tools/services.ts";
import { AppError, ConfigError } from "../util/errors.ts";
import { openVault } from "../vault/vault.ts";
import { VERSION } from "../version.ts";
import { EXIT_CONFIG, EXIT_CRASH, EXIT_OK, EXIT_RESTART } from "./exitCodes.ts";

const SHUTDOWN_DEADLINE_MS = 10_000;

/** A startup failure that restarting will not fix. */
class StartupError extends Error {}

export interface RunningDaemon {
  services: Services;
  url: string;
  stop(reason: string): Promise<void>;
  /** Resolves when /restart asked the supervised daemon to restart (never when not supervised). */
  restartRequested: Promise<void>;
}

/**
 * Starts the daemon in this process: env files, settings and config validated (an invalid file refuses the start),
 * store migrated, vault and token ready, HTTP server listening, daemon.json written.
 */
export async function startDaemon(env: NodeJS.ProcessEnv = process.env): Promise<RunningDaemon> {
  const paths = dataPaths(resolveDataDir(env));
  try {
    mkdirSync(paths.dataDir, { recursive: true, mode: 0o700 });
    accessSync(paths.dataDir, constants.W_OK);
  } catch (error) {
    throw new StartupError(
      `the data directory ${paths.dataDir} is not writable (${(error as Error).message}); set ASSISTANT_DATA_DIR to a folder you own`,
    );
  }
  let settings: ReturnType<typeof readSettings>;
  try {
    applyEnvFiles(paths, env);
    settings = readSettings(env);
  } catch (error) {
    throw new StartupError((error as Error).message);
  }
  // In a terminal the log is mirrored to stderr; under the supervisor it goes to the file only, so a supervisor
  // that dies cannot take the daemon down with a broken pipe.
  const supervised = settings.supervisorPid !== undefined;
  if (supervised) process.stderr.on("error", () => {});
  const logger = createLogger({
    level: settings.logLevel,
    file: paths.logFile,
    ...(supervised ? {} : { mirror: process.stderr }),
  });

  const invalid = validateConfigFiles(paths).filter((r) => r.status === "invalid");
  if (invalid.length > 0) {
    const lines = invalid.map((r) => `${r.file}: ${r.error?.key ? `${r.error.key}: ` : ""}${r.error?.reason}`);
    throw new StartupError(
      `refusing to start with invalid configuration (run \`assistant config validate\`):\n  ${lines.join("\n  ")}`,
    );
  }
  const running = readDaemonInfo(paths.daemonInfo);
  if (running && running.pid !== process.pid && processAlive(running.pid)) {
    throw new StartupError(
      `a daemon (pid ${running.pid}) already uses ${paths.dataDir} on port ${running.port}; stop it with \`assistant stop\``,
    );
  }

  const db = openDatabase(paths.database);
  // Group commit: the writes of one event-loop turn share one transaction (store/writeBatch.ts).
  enableWriteBatching(db, (error) =>
    logger.error("database writes failed and were rolled back", { error: error.message }),
  );
  const events = new EventLog(db);
  const webSessions = new WebSessions(db);
  webSessions.pruneExpired();
  let boundPort = settings.port;
  const vault = openVault(paths, env);
  let llm: ReturnType<typeof createLlmServices>;
  try {
    llm = createLlmServices({ paths, env, settings, vault, db, logger });
  } catch (error) {
    db.close();
    throw new StartupError((error as Error).message);
  }
  const sessions = new SessionStore(db);
  let approvals: ReturnType<typeof createApprovalServices>;
  try {
    approvals = createApprovalServices({ db, settings, events });
  } catch (error) {
    db.close();
    throw new StartupError((error as Error).message);
  }
  const tools = createToolServices({ paths, env, settings, vault, approvals, events, logger });
  const skills = createSkillServices({ paths, settings, tools, queue: approvals.queue, events, logger });
  let plugins: ReturnType<typeof createPluginServices>;
  try {
    plugins = createPluginServices({
      db,
      paths,
      settings,
      events,
      logger,
      tools: tools.registry,
      secret: (key) => (vault.has(key) ? vault.get(key) : null),
    });
  } catch (error) {
    approvals.close();
    db.close();
    throw new StartupError((error as Error).message);
  }
  const routing = new MessageRouting([() => plugins.registry.rules(), () => skills.registry.rules()]);
  let memory: ReturnType<typeof createMemoryServices>["memory"];
  try {
    ({ memory } = createMemoryServices({ db, llm, sessions, events, settings, logger, tools }));
  } catch (error) {
    approvals.close();
    db.close();
    throw new StartupError((error as Error).message);
  }
  const startedAt = new Date();
  let requestRestart = () => {};
  const restartRequested = new Promise<void>((resolve) => (requestRestart = resolve));
  let chatServices: ReturnType<typeof createChatServices>;
  let scheduler: Scheduler; // built right after the agent, before any request can reach /schedule
  try {
    chatServices = createChatServices({
      db,
      sessions,
      llm,
      tools,
      events,
      paths,
      env,
      settings,
      logger,
      vault,
      skills: skills.registry,
      plugins: plugins.registry,
      routing,
      memory,
      scheduler: () => scheduler,
      self: () => ({ pid: process.pid, port: boundPort }),
      // The reply goes out first: the stop begins a moment later and lets in-flight requests finish.
      ...(supervised ? { restart: () => setTimeout(requestRestart, 200) } : {}),
      status: () =>
        `assistant ${VERSION}, pid ${process.pid}, up ${Math.round((Date.now() - startedAt.getTime()) / 1000)} s, ` +
        `listening on ${settings.bind}:${boundPort}, data in ${paths.dataDir}, embedded model ${llm.embedded.state().status}`,
    });
  } catch (error) {
    approvals.close();
    db.close();
    throw new StartupError((error as Error).message);
  }
  const { agent, conversation } = chatServices;
  try {
    scheduler = new Scheduler({
      db,
      sessions,
      budget: llm.budget,
      events,
      logger,
      settings,
      submit: (request) => agent.submit(request),
      wait: (taskId) => agent.wait(taskId),
      findTask: (taskId) => agent.tasks.find(taskId),
    });
  } catch (error) {
    approvals.close();
    db.close();
    throw new StartupError((error as Error).message);
  }
  const mission = new MissionService({
    paths,
    db,
    events,
    agent,
    budget: llm.budget,
    logger,
    clock: SYSTEM_CLOCK,
    settings,
    watchFile: watchMissionFile,
  });
  const services: Services = {
    version: VERSION,
    startedAt,
    paths,
    env,
    settings,
    logger,
    db,
    events,
    vault,
    token: ensureAuthToken(paths.authToken),
    loginCodes: new LoginCodes(),
    webSessions,
    llm,
    sessions,
    agent,
    conversation,
    approvals,
    tools,
    skills,
    plugins,
    routing,
    memory,
    scheduler,
    mission,
    port: () => boundPort,
  };

  const app = buildApp(services);
  try {
    await app.listen({ host: settings.bind, port: settings.port });
  } catch (error) {
    approvals.close();
    db.close();
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE") {
      throw new StartupError(
        `port ${settings.port} on ${settings.bind} is already in use; stop what uses it or set ASSISTANT_PORT`,
      );
    }
    if (code === "EADDRNOTAVAIL")
      throw new StartupError(`cannot listen on ${settings.bind}: no such address on this machine (ASSISTANT_BIND)`);
    throw error;
  }
  const address = app.server.address();
  if (address && typeof address === "object") boundPort = address.port;

  const supervisor = settings.supervisorPid;
  writeDaemonInfo(paths.daemonInfo, {
    pid: process.pid,
    port: boundPort,
    bind: settings.bind,
    version: VERSION,
    started_at: services.startedAt.toISOString(),
    ...(supervisor ? { supervisor_pid: supervisor } : {}),
  });
  events.emit("daemon_started", { version: VERSION, pid: process.pid });
  const recovered = agent.recover();
  if (recovered.interrupted > 0 || recovered.resumed > 0) logger.info("tasks recovered after the last stop", recovered);
  // After recovery, so a run the crash interrupted counts as ended and overdue schedules run (once) now.
  scheduler.start();
  memory.start();
  mission.start(); // after recovery too: a cycle whose task the crash interrupted is recorded as such
  const host = settings.bind === "0.0.0.0" || settings.bind === "::" ? "127.0.0.1" : settings.bind;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${boundPort}`;
  logger.info(`assistant daemon ${VERSION} listening on ${url}`, { pid: process.pid, data_dir: paths.dataDir });
  if (settings.bind !== "127.0.0.1" && settings.bind !== "::1" && settings.bind !== "localhost") {
    logger.warn(
      `listening on ${settings.bind}: other machines on the network can reach this daemon (API token still required)`,
    );
  }

  let stopping: Promise<void> | undefined;
  const stop = (reason: string) => {
    stopping ??= (async () => {
      logger.info("shutting down", { reason });
      events.emit("daemon_stopping", { reason });
      scheduler.close(); // no new runs; a run in flight ends with the agent below
      skills.service.close();
      await plugins.registry.close();
      tools.runner.close(); // running commands are killed, calls waiting for approval end
      mission.close(); // no new cycles; a cycle in flight ends (and is recorded) with the agent below
      await agent.close(); // running tasks end as cancelled; queued ones wait for the next start
      await memory.close(); // learning in flight stops; unread messages are learned after the next start
      await app.close(); // stops accepting, lets in-flight requests finish, ends event streams
      await llm.embedded.close();
      approvals.close();
      db.close();
      removeDaemonInfo(paths.daemonInfo, process.pid);
      logger.info("stopped");
    })();
    return stopping;
  };
  return { services, url, stop, restartRequested };
}

/** `assistant-daemon` / `assistant start --foreground`: runs until a signal, then shuts down gracefully. */
export async function runDaemonForeground(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let daemon: RunningDaemon;
  try {
    daemon = await startDaemon(env);
  } catch (error) {
    const restartable = !(error instanceof StartupError || error instanceof ConfigError || error instanceof AppError);
    process.stderr.write(`assistant-daemon: ${(error as Error).message}\n`);
    return restartable ? EXIT_CRASH : EXIT_CONFIG;
  }
  return await new Promise<number>((resolve) => {
    const shutdown = (reason: string, code: number) => {
      const deadline = setTimeout(() => {
        daemon.services.logger.error("graceful shutdown took too long; exiting");
        resolve(EXIT_CRASH);
      }, SHUTDOWN_DEADLINE_MS);
      deadline.unref();
      daemon.stop(reason).then(
        () => resolve(code),
        (error: Error) => {
          daemon.services.logger.error("shutdown failed", { error: error.message });
          resolve(EXIT_CRASH);
        },
      );
    };
    const onSignal = (signal: NodeJS.Signals) => shutdown(signal, EXIT_OK);
    process.once("SIGTERM", onSignal);
    process.once("SIGINT", onSignal);
    process.once("SIGHUP", onSignal);
    // Under the supervisor, /restart: stop cleanly, and the exit code tells the supervisor to start it again.
    void daemon.restartRequested.then(() => shutdown("restart requested", EXIT_RESTART));
  });
}
