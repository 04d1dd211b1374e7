import type { Command } from "commander";
import type { DaemonProbe } from "../daemon/control.ts";
import type { SupervisorState } from "../daemon/supervisor.ts";
import { AppError } from "../util/errors.ts";
import { plural } from "../util/plural.ts";
import { type CliContext, output } from "./context.ts";

// `assistant start [--foreground] | restart [--foreground] | stop | up [--open-hint] | status [--json]`: thin wording over daemon/control.ts,
// which is imported inside the actions so that other commands do not load it.

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

function supervisorNote(state: SupervisorState | undefined): string {
  if (!state?.last_exit?.stderr.length) return "";
  return `\n  last words of the daemon:\n    ${state.last_exit.stderr.join("\n    ")}`;
}

function restartIn(at: string | undefined): string {
  const ms = at ? Date.parse(at) - Date.now() : Number.NaN;
  return Number.isFinite(ms) && ms > 0 ? `in ${seconds(ms)}` : "now";
}

/** Why no daemon answers, and what to do about it. */
function notRunningMessage(ctx: CliContext, probe: DaemonProbe): string {
  const log = ctx.paths.logFile;
  if (probe.info) {
    return `the daemon (pid ${probe.info.pid}) does not answer at ${probe.url}: it may still be starting, or be stuck. See ${log}; restart it with \`assistant stop\` then \`assistant start\``;
  }
  const state = probe.supervisor;
  if (probe.supervisorPid && state?.state === "backoff") {
    return `the daemon is not running: it crashed and the supervisor (pid ${probe.supervisorPid}) restarts it ${restartIn(state.next_restart_at)}. See ${log}${supervisorNote(state)}`;
  }
  if (probe.supervisorPid)
    return `the daemon is starting (supervisor pid ${probe.supervisorPid}); try again in a moment`;
  if (state?.state === "gave_up" || state?.state === "failed") {
    return `no daemon is running for ${ctx.paths.dataDir}: at ${state.updated_at} ${state.message ?? "the supervisor stopped"}${supervisorNote(state)}`;
  }
  return `no daemon is running for ${ctx.paths.dataDir}; start it with \`assistant start\` (or \`assistant up\`)`;
}

function openHint(ctx: CliContext, url: string): string {
  return [
    "",
    // Only addresses that answer: the HTTP API, and the web UI (its shell and Chat tab so far).
    "How to reach it:",
    `  web UI     ${url}/  (\`assistant open\` signs the browser in; docs/web-ui.md)`,
    `  health     ${url}/api/health  (or \`assistant status\`)`,
    `  API token  ${ctx.paths.authToken}  (send it as \`Authorization: Bearer <token>\`; keep it private)`,
    `  log        ${ctx.paths.logFile}`,
    "",
    "Next steps (in the project folder, `assistant` is `npm run assistant --`; `npm link` makes it a command):",
    "  assistant chat       talk to it (the chat opens next when you ran `npm start`)",
    "  assistant init       choose a model server or a cloud key (docs/models.md)",
    "  assistant status     is the daemon up?",
    "  assistant paths      where the data and config files are",
    "  assistant doctor     health checks; add --fix to repair what can be repaired",
    "  assistant restart    apply a changed config file",
    "  assistant stop       stop the daemon",
  ].join("\n");
}

/** `start` and the second half of `restart`. */
async function startCommand(ctx: CliContext, opts: { foreground?: boolean }): Promise<void> {
  if (opts.foreground) {
    const { runDaemonForeground } = await import("../daemon/foreground.ts");
    const code = await runDaemonForeground(ctx.env);
    // Like `assistant-daemon`: the daemon's exit code is the command's, and lingering keep-alive sockets must
    // not keep a stopped daemon's process alive.
    process.exit(code);
  }
  const { startBackground } = await import("../daemon/control.ts");
  const started = await startBackground(ctx.paths, ctx.env);
  ctx.stdout.write(
    [
      `assistant daemon ${started.version} started in ${seconds(started.elapsedMs)}`,
      `  url  ${started.url}`,
      `  pid  ${started.pid} (supervisor ${started.supervisorPid} restarts it after a crash)`,
      `  log  ${started.logFile}`,
      "Check it with `assistant status`; stop it with `assistant stop`.",
    ].join("\n") + "\n",
  );
}

export function registerDaemonCommands(program: Command, ctx: CliContext): void {
  program
    .command("start")
    .description("start the daemon in the background; it is restarted automatically after a crash")
    .option("--foreground", "run the daemon in this terminal until Ctrl-C; exits with the daemon's exit code")
    .action((opts: { foreground?: boolean }) => startCommand(ctx, opts));

  program
    .command("restart")
    .description("stop the daemon if it runs, then start it again (after a config change)")
    .option("--foreground", "start it in this terminal until Ctrl-C, as `start --foreground` does")
    .action(async (opts: { foreground?: boolean }) => {
      const { stopDaemon } = await import("../daemon/control.ts");
      const stopped = await stopDaemon(ctx.paths, ctx.env);
      ctx.stdout.write(
        stopped.pid !== undefined
          ? `stopped the daemon (pid ${stopped.pid})\n`
          : stopped.running
            ? `stopped the supervisor (pid ${stopped.supervisorPid})\n`
            : "no daemon was running; starting it\n",
      );
      await startCommand(ctx, opts);
    });

  program
    .command("stop")
    .description("stop the daemon (and its supervisor) and wait until it is gone")
    .action(async () => {
      const { stopDaemon } = await import("../daemon/control.ts");
      const stopped = await stopDaemon(ctx.paths, ctx.env);
      if (!stopped.running) {
        ctx.stdout.write(`no daemon is running for ${ctx.paths.dataDir}; nothing to stop\n`);
      } else if (stopped.pid !== undefined) {
        ctx.stdout.write(
          `stopped the daemon (pid ${stopped.pid}) at ${stopped.url}; start it again with \`assistant start\`\n`,
        );
      } else {
        ctx.stdout.write(
          `stopped the supervisor (pid ${stopped.supervisorPid}), which was about to restart the daemon\n`,
        );
      }
    });

  program
    .command("up")
    .description("start the daemon if needed, wait until it is healthy and check it is this CLI's version")
    .option("--open-hint", "then print how to reach it and what to do next")
    .action(async (opts: { openHint?: boolean }) => {
      const { upDaemon } = await import("../daemon/control.ts");
      const up = await upDaemon(ctx.paths, ctx.env);
      const how = up.started ? `started in ${seconds(up.started.elapsedMs)}` : "already running";
      // host:port, not a link: the daemon's root has no page to open until a web UI exists.
      const { host } = new URL(up.url);
      ctx.stdout.write(`assistant daemon ${up.version} is up on ${host} (pid ${up.pid}, ${how})\n`);
      if (opts.openHint) ctx.stdout.write(`${openHint(ctx, up.url)}\n`);
    });

  program
    .command("status")
    .description("whether the daemon runs, where, since when and how it is doing")
    .option("--json", "machine-readable output")
    .action(async (opts: { json?: boolean }) => {
      const { probeDaemon } = await import("../daemon/control.ts");
      const probe = await probeDaemon(ctx.paths, ctx.env);
      const supervisor = probe.supervisor ?? null;
      if (!probe.info || !probe.health) {
        if (opts.json) {
          output(
            ctx,
            true,
            { running: false, data_dir: ctx.paths.dataDir, url: probe.url, daemon: probe.info ?? null, supervisor },
            () => "",
          );
        }
        throw new AppError("not_found", notRunningMessage(ctx, probe));
      }
      const { callDaemon } = await import("./daemonClient.ts");
      const status = await callDaemon(ctx, "its status cannot be read", (client) => client.getStatus());
      const info = probe.info;
      const supervised = !info.supervisor_pid
        ? "not supervised: started with --foreground"
        : probe.supervisorPid
          ? `supervised by ${info.supervisor_pid}, restarted ${plural(supervisor?.restarts ?? 0, "time")}`
          : `its supervisor ${info.supervisor_pid} is gone, so nothing restarts it after a crash; \`assistant stop\` then \`assistant start\` to fix`;
      output(ctx, opts.json, { running: true, url: probe.url, daemon: info, supervisor, status }, () =>
        [
          `assistant daemon ${status.version} is running`,
          `  url       ${probe.url}`,
          `  pid       ${status.pid} (${supervised})`,
          `  uptime    ${status.uptime_secs} s (since ${status.started_at})`,
          `  memory    ${Math.round(status.memory_rss_bytes / 1024 / 1024)} MiB resident`,
          `  data dir  ${status.data_dir}`,
          `  log       ${ctx.paths.logFile}`,
          `  counts    ${Object.entries(status.counts)
            .map(([k, v]) => `${k} ${v}`)
            .join(", ")}`,
        ].join("\n"),
      );
    });
}
