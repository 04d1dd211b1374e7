import type { Mission } from "@assistant/client";
import type { Command } from "commander";
import { type CliContext, output } from "./context.ts";
import { callDaemon } from "./daemonClient.ts";

// `assistant mission status|pause|resume|edit`: the autonomous mission (docs/mission.md) over the daemon's HTTP
// API; `edit` opens autonomous_mission.yaml in $VISUAL or $EDITOR and validates it afterwards, daemon or not.

async function show(ctx: CliContext, value: Mission, json: boolean | undefined, title?: string): Promise<void> {
  const { formatMission } = await import("../mission/format.ts");
  output(ctx, json, value, () => (title ? `${title}\n${formatMission(value)}` : formatMission(value)));
}

/** Runs the user's editor on `file` in this terminal; its exit status, or why it could not run. */
async function runEditor(ctx: CliContext, file: string): Promise<void> {
  const { spawnSync } = await import("node:child_process");
  const { AppError } = await import("../util/errors.ts");
  const editor = ctx.env.VISUAL || ctx.env.EDITOR || "vi";
  // Through the shell: EDITOR often carries arguments (`code --wait`); the file is passed as "$1", never parsed.
  const run =
    process.platform === "win32"
      ? spawnSync(`${editor} "${file}"`, { shell: true, stdio: "inherit", env: ctx.env })
      : spawnSync("/bin/sh", ["-c", `${editor} "$1"`, "sh", file], { stdio: "inherit", env: ctx.env });
  if (run.error || run.status !== 0) {
    const why = run.error ? run.error.message : `it exited with ${run.status ?? run.signal}`;
    throw new AppError("internal", `the editor \`${editor}\` failed (${why}); set EDITOR to the editor you use`);
  }
}

export function registerMissionCommands(program: Command, ctx: CliContext): void {
  const mission = program
    .command("mission")
    .description("the autonomous mission: cycles toward an objective every heartbeat (docs/mission.md)");
  mission
    .command("status")
    .description("the mission's objective, status and why, cycles, last report and next heartbeat")
    .option("--json", "machine-readable output")
    .action(async (opts: { json?: boolean }) => {
      const value = await callDaemon(ctx, "the mission cannot be read", (client) => client.getMission());
      await show(ctx, value, opts.json);
    });
  for (const action of ["pause", "resume"] as const) {
    mission
      .command(action)
      .description(
        action === "pause"
          ? "no new cycles (a running cycle finishes); stays paused after a restart"
          : "resume a paused mission: the next heartbeat is heartbeat_secs from now",
      )
      .option("--json", "machine-readable output")
      .action(async (opts: { json?: boolean }) => {
        const value = await callDaemon(ctx, `the mission was not ${action}d`, (client) =>
          action === "pause" ? client.pauseMission() : client.resumeMission(),
        );
        await show(ctx, value, opts.json, action === "pause" ? "Paused." : "Resumed.");
      });
  }
  mission
    .command("edit")
    .description("open autonomous_mission.yaml in $EDITOR, then check it; a running daemon applies it at once")
    .action(async () => {
      const [{ ensureMissionFile, readMissionFile }, { AppError }] = await Promise.all([
        import("../mission/missionFile.ts"),
        import("../util/errors.ts"),
      ]);
      const file = ensureMissionFile(ctx.paths);
      await runEditor(ctx, file);
      const read = readMissionFile(ctx.paths);
      if (read.error) {
        throw new AppError(
          "invalid_request",
          `${read.error.message}. No cycle starts until it is fixed: run \`assistant mission edit\` again`,
        );
      }
      const { processAlive, readDaemonInfo } = await import("../runtime/daemonInfo.ts");
      const info = readDaemonInfo(ctx.paths.daemonInfo);
      if (!info || !processAlive(info.pid)) {
        ctx.stdout.write(`${file} is valid; the daemon is not running: it applies the mission when it starts\n`);
        return;
      }
      const value = await callDaemon(ctx, "the mission cannot be read", (client) => client.getMission());
      await show(ctx, value, false, `${file} is valid and applied:`);
    });
}
