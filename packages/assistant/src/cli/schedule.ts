import type { Schedule } from "@assistant/client";
import type { Command } from "commander";
import { type CliContext, output } from "./context.ts";
import { callDaemon } from "./daemonClient.ts";
import { taskTypeArgument } from "./taskTypeOption.ts";

// `assistant schedule list|create|delete|pause|resume`: the daemon's schedules over its HTTP API (same service as
// /schedule in chat).

interface CreateOptions {
  cron?: string;
  timezone?: string;
  taskType?: string;
  json?: boolean;
}

export function registerScheduleCommands(program: Command, ctx: CliContext): void {
  const schedule = program
    .command("schedule")
    .description("recurring schedules: a message run as a task every N seconds or on a cron expression");
  const show = async (value: Schedule, json: boolean | undefined, title: string) => {
    const { formatSchedule } = await import("../scheduler/format.ts");
    output(ctx, json, value, () => `${title}\n${formatSchedule(value)}`);
  };
  schedule
    .command("list")
    .description("schedules, newest first")
    .option("--json", "machine-readable output")
    .action(async (opts: { json?: boolean }) => {
      const value = await callDaemon(ctx, "schedules cannot be listed", (client) =>
        client.listSchedules({ limit: 500 }),
      );
      const { formatSchedules } = await import("../scheduler/format.ts");
      output(ctx, opts.json, value, () =>
        formatSchedules(value.items, "`assistant schedule create <NAME> <INTERVAL> <DESCRIPTION>`"),
      );
    });
  schedule
    .command("create <name> <interval_and_description...>")
    .usage("<NAME> <INTERVAL> <DESCRIPTION> | <NAME> <DESCRIPTION> --cron <expr>")
    .description(
      "create a schedule: the description is sent as a task every INTERVAL (3600, 90s, 30m, 1h, 2d...) or on --cron",
    )
    .option("--cron <expr>", 'a 5-field cron expression instead of an interval, e.g. "0 9 * * mon-fri"')
    .option("--timezone <zone>", "IANA time zone of --cron, e.g. Europe/Paris (default: the daemon's local zone)")
    .option(
      "--task-type <type>",
      "the task type of each run (default: classified from the description)",
      taskTypeArgument,
    )
    .option("--json", "machine-readable output")
    .action(async (name: string, rest: string[], opts: CreateOptions, command: Command) => {
      const { intervalProblem, parseInterval } = await import("../scheduler/interval.ts");
      const [interval, ...words] = opts.cron !== undefined ? [undefined, ...rest] : rest;
      const description = words.join(" ");
      // With --cron a leading interval would silently become part of the description.
      const both = opts.cron !== undefined && rest.length > 1 && parseInterval(rest[0]!) !== undefined;
      if (!description || both) {
        command.error("error: give <NAME> <INTERVAL> <DESCRIPTION>, or <NAME> <DESCRIPTION> --cron <expr>");
      }
      const seconds = interval === undefined ? undefined : parseInterval(interval);
      if (interval !== undefined && seconds === undefined) command.error(`error: ${intervalProblem(interval)}`);
      const value = await callDaemon(ctx, "the schedule was not created", (client) =>
        client.createSchedule({
          name,
          description,
          ...(seconds !== undefined ? { interval_secs: seconds } : {}),
          ...(opts.cron !== undefined ? { cron: opts.cron } : {}),
          ...(opts.timezone !== undefined ? { timezone: opts.timezone } : {}),
          ...(opts.taskType !== undefined ? { task_type: opts.taskType } : {}),
        }),
      );
      await show(value, opts.json, `Created schedule ${value.id}.`);
    });
  schedule
    .command("delete <id>")
    .description("delete a schedule (a run in flight finishes)")
    .option("--json", "machine-readable output")
    .action(async (id: string, opts: { json?: boolean }) => {
      const value = await callDaemon(ctx, "the schedule was not deleted", (client) => client.deleteSchedule(id));
      output(ctx, opts.json, value, () => `Deleted schedule ${value.removed}.`);
    });
  for (const action of ["pause", "resume"] as const) {
    schedule
      .command(`${action} <id>`)
      .description(action === "pause" ? "pause a schedule" : "resume a paused schedule (next run one window from now)")
      .option("--json", "machine-readable output")
      .action(async (id: string, opts: { json?: boolean }) => {
        const value = await callDaemon(ctx, `the schedule was not ${action}d`, (client) =>
          action === "pause" ? client.pauseSchedule(id) : client.resumeSchedule(id),
        );
        await show(value, opts.json, action === "pause" ? "Paused:" : "Resumed:");
      });
  }
}
