import type { StoredEvent, Task, TaskEvents, TaskQueue } from "@assistant/client";
import { type Command, InvalidArgumentError } from "commander";
import { AppError } from "../util/errors.ts";
import { plural } from "../util/plural.ts";
import { type CliContext, output } from "./context.ts";
import { callDaemon, connectDaemon, withDaemon } from "./daemonClient.ts";

// `assistant task ...`: tasks live in the running daemon, so every command talks to it (docs/cli.md#tasks).
// `watch` follows a task by polling its stored events until it ends.

const STATUSES = ["queued", "running", "waiting_approval", "completed", "failed", "cancelled"] as const;
const FINAL = new Set(["completed", "failed", "cancelled"]);
const DEFAULT_INTERVAL_MS = 500;
const EVENTS_PAGE = 1000;

/** An option parser for a whole number in [min, max]; a bad value is a usage error (exit 2). */
function wholeNumber(min: number, max: number): (raw: string) => number {
  return (raw) => {
    const value = Number(raw);
    if (!/^\d+$/.test(raw.trim()) || !Number.isInteger(value) || value < min || value > max) {
      throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}`);
    }
    return value;
  };
}

function taskStatus(raw: string): (typeof STATUSES)[number] {
  const status = STATUSES.find((known) => known === raw);
  if (!status) throw new InvalidArgumentError(`expected one of ${STATUSES.join(", ")}`);
  return status;
}

export function registerTaskCommands(program: Command, ctx: CliContext): void {
  const task = program
    .command("task")
    .description("background tasks: list, inspect, watch, cancel, report, message queue (daemon must be up)");

  task
    .command("list")
    .description("tasks, newest first")
    .option("--status <status>", `only tasks in this state (${STATUSES.join(", ")})`, taskStatus)
    .option("--limit <n>", "at most this many tasks (1-500)", wholeNumber(1, 500), 50)
    .option("--json", "machine-readable output")
    .action(async (opts: { status?: (typeof STATUSES)[number]; limit: number; json?: boolean }) => {
      const { status, limit } = opts;
      const page = await callDaemon(ctx, "the tasks cannot be listed", (client) =>
        client.listTasks({ limit, ...(status ? { status } : {}) }),
      );
      output(ctx, opts.json, page.items, () => formatList(page.items, opts.status));
    });

  task
    .command("show")
    .description("one task: status, times, usage, reply")
    .argument("<task_id>", "task id, or its first characters (`assistant task list`)")
    .option("--json", "machine-readable output")
    .action(async (typedId: string, opts: { json?: boolean }) => {
      const taskId = await taskIdFrom(ctx, typedId);
      const record = await callDaemon(ctx, `task ${taskId} cannot be shown`, (client) => client.getTask(taskId));
      output(ctx, opts.json, record, () => formatTask(record));
    });

  task
    .command("events")
    .description("the task's stored events, oldest first")
    .argument("<task_id>", "task id, or its first characters")
    .option("--limit <n>", "at most this many events (1-1000)", wholeNumber(1, 1000), 200)
    .option("--json", "machine-readable output")
    .action(async (typedId: string, opts: { limit: number; json?: boolean }) => {
      const { limit } = opts;
      const taskId = await taskIdFrom(ctx, typedId);
      const page = await callDaemon(ctx, `the events of task ${taskId} cannot be listed`, (client) =>
        client.listTaskEvents(taskId, { limit }),
      );
      output(ctx, opts.json, page, () =>
        page.items.length === 0
          ? `no events for task ${page.task_id} (${page.status})`
          : page.items.map(formatEvent).join("\n"),
      );
    });

  task
    .command("watch")
    .description("follow a task live until it ends; exits 0 when it completed, 1 when it failed or was cancelled")
    .argument("<task_id>", "task id, or its first characters")
    .option("--interval-ms <n>", "polling interval (50-60000)", wholeNumber(50, 60_000), DEFAULT_INTERVAL_MS)
    .action(async (typedId: string, opts: { intervalMs: number }) => {
      const interval = opts.intervalMs;
      const taskId = await taskIdFrom(ctx, typedId);
      await watch(ctx, taskId, interval);
    });

  task
    .command("cancel")
    .description("cancel a queued or running task")
    .argument("<task_id>", "task id, or its first characters")
    .option("--json", "machine-readable output")
    .action(async (typedId: string, opts: { json?: boolean }) => {
      const taskId = await taskIdFrom(ctx, typedId);
      const record = await callDaemon(ctx, `task ${taskId} cannot be cancelled`, (client) => client.cancelTask(taskId));
      output(ctx, opts.json, record, () =>
        record.status === "cancelled"
          ? `${record.id} cancelled`
          : `${record.id} is being cancelled (it was ${record.status})`,
      );
    });

  task
    .command("report")
    .description("the operator report of a finished task: done, needs review, failed, next steps")
    .argument("<task_id>", "task id, or its first characters")
    .option("--json", "machine-readable output")
    .action(async (typedId: string, opts: { json?: boolean }) => {
      const taskId = await taskIdFrom(ctx, typedId);
      const report = await callDaemon(ctx, `the report of task ${taskId} is not available`, (client) =>
        client.getTaskReport(taskId),
      );
      const { reportMarkdown } = await import("../agent/reports.ts");
      output(ctx, opts.json, report, () => reportMarkdown(report).trimEnd());
    });

  const queue = task.command("queue").description("steering and follow-up messages not yet delivered to a task");
  queue
    .command("list")
    .description("the undelivered messages of a task")
    .argument("<task_id>", "task id, or its first characters")
    .option("--json", "machine-readable output")
    .action(async (typedId: string, opts: { json?: boolean }) => {
      const taskId = await taskIdFrom(ctx, typedId);
      const result = await callDaemon(ctx, `the queue of task ${taskId} cannot be listed`, (client) =>
        client.getTaskQueue(taskId),
      );
      output(ctx, opts.json, result, () => formatQueue(result));
    });
  queue
    .command("clear")
    .description("drop every undelivered message of a task")
    .argument("<task_id>", "task id, or its first characters")
    .option("--json", "machine-readable output")
    .action(async (typedId: string, opts: { json?: boolean }) => {
      const taskId = await taskIdFrom(ctx, typedId);
      const result = await callDaemon(ctx, `the queue of task ${taskId} cannot be cleared`, (client) =>
        client.clearTaskQueue(taskId),
      );
      output(
        ctx,
        opts.json,
        result,
        () => `cleared ${plural(result.cleared, "queued message")} of task ${result.task_id}`,
      );
    });
}

/** Polls the task's events until it is final; prints each new event, then the status and the reply. */
async function watch(ctx: CliContext, taskId: string, intervalMs: number): Promise<void> {
  const what = `task ${taskId} cannot be watched`;
  const daemon = await connectDaemon(ctx, what);
  const first = await withDaemon(what, () => daemon.getTask(taskId));
  ctx.stdout.write(`watching task ${first.id} (${first.status}): ${preview(first.message)}\n`);
  let after = 0;
  for (;;) {
    let page: TaskEvents;
    do {
      page = await withDaemon(what, () => daemon.listTaskEvents(taskId, { limit: EVENTS_PAGE, after }));
      for (const event of page.items) {
        ctx.stdout.write(`${formatEvent(event)}\n`);
        after = Math.max(after, Number(event.id));
      }
    } while (page.items.length === EVENTS_PAGE);
    // The route reads the status before the events, so a final status means every event is already printed.
    if (FINAL.has(page.status)) break;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  const done = await withDaemon(what, () => daemon.getTask(taskId));
  ctx.stdout.write(`task ${done.id} ${done.status}${done.reason ? ` (${done.reason})` : ""}\n`);
  if (done.reply) ctx.stdout.write(`${done.reply}\n`);
  if (done.status !== "completed") {
    throw new AppError("internal", `task ${done.id} ${done.status}${done.reason ? `: ${done.reason}` : ""}`);
  }
}

function preview(text: string, max = 100): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max)}...` : line;
}

function clock(ts: string): string {
  const date = new Date(ts);
  return Number.isNaN(date.getTime()) ? ts : date.toTimeString().slice(0, 8);
}

/** One readable line per stored event (`12:00:01 running`, `12:00:02 tool_call read_file {...}`). */
export function formatEvent(event: StoredEvent): string {
  let text: string;
  switch (event.kind) {
    case "task_created": {
      const { origin, task_type, message_preview } = event.data;
      text = `created (${origin}${task_type ? `, ${task_type}` : ""}): ${preview(message_preview)}`;
      break;
    }
    case "task_state_changed":
      text = `${event.data.status}${event.data.reason ? ` (${event.data.reason})` : ""}`;
      break;
    case "tool_call_requested":
      text = `tool_call ${event.data.tool} ${preview(event.data.arguments_summary)}`;
      break;
    case "tool_call_completed": {
      const { tool, status, rule } = event.data;
      text = `tool_call_completed ${tool} ${status}${rule ? ` (${rule})` : ""}`;
      break;
    }
    case "approval_requested":
      text = `approval_requested ${event.data.tool} (queue item ${event.data.id})`;
      break;
    case "approval_resolved":
      text = `approval_resolved ${event.data.tool} ${event.data.status} (queue item ${event.data.id})`;
      break;
    case "message_delta":
      text = `message_delta round ${event.data.round}: ${preview(event.data.text) || "(no text)"}`;
      break;
    case "user_steering_queued":
    case "user_follow_up_queued":
      text = `${event.kind} ${preview(event.data.text_preview)}`;
      break;
    default:
      text = `${event.kind} ${preview(JSON.stringify(event.data))}`;
  }
  return `${clock(event.ts)} ${text}`;
}

/** Ids are shown by their first characters, as git shows commits; every task command takes such a prefix. */
const SHORT_ID = 8;

function formatList(items: Task[], status: string | undefined): string {
  if (items.length === 0) return status ? `no ${status} tasks` : "no tasks";
  const row = (id: string, state: string, created: string, message: string) =>
    `${id.padEnd(SHORT_ID)}  ${state.padEnd(16)}  ${created.padEnd(24)}  ${message}`.trimEnd();
  return [
    row("ID", "STATUS", "CREATED", "MESSAGE"),
    ...items.map((t) => row(t.id.slice(0, SHORT_ID), t.status, t.created_at, preview(t.message, 60))),
  ].join("\n");
}

const FULL_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The task a typed id names: a full id as is, else the one task among the newest 500 whose id starts with it. */
async function taskIdFrom(ctx: CliContext, typed: string): Promise<string> {
  if (FULL_ID.test(typed)) return typed;
  const page = await callDaemon(ctx, `task ${typed} cannot be found`, (client) => client.listTasks({ limit: 500 }));
  const matches = page.items.filter((t) => t.id.startsWith(typed.toLowerCase()));
  if (matches.length === 1) return matches[0]!.id;
  if (matches.length === 0 || typed === "") {
    throw new AppError("not_found", `no task id starts with "${typed}" (see \`assistant task list\`)`);
  }
  throw new AppError("invalid_request", `"${typed}" starts ${matches.length} task ids; type more of it`);
}

function formatTask(t: Task): string {
  const lines = [
    `task      ${t.id}`,
    `status    ${t.status}${t.reason ? ` (${t.reason})` : ""}`,
    `session   ${t.session_id}${t.parent_id ? ` (subtask of ${t.parent_id})` : ""}`,
    `origin    ${t.origin}${t.task_type ? `, ${t.task_type}` : ""}`,
    `created   ${t.created_at}${t.finished_at ? `; finished ${t.finished_at}` : ""}`,
    `model     ${t.provider ? `${t.provider}/${t.model}` : "-"}; ${plural(t.rounds, "round")}, ${t.input_tokens} in / ${t.output_tokens} out tokens`,
    `message   ${preview(t.message, 200)}`,
  ];
  if (t.reply) lines.push("", t.reply);
  return lines.join("\n");
}

function formatQueue(queue: TaskQueue): string {
  const all = [...queue.steering, ...queue.follow_up];
  if (all.length === 0) return `no queued messages for task ${queue.task_id}`;
  return all.map((m) => `${m.id}  ${m.mode.padEnd(9)}  ${m.created_at}  ${preview(m.text)}`).join("\n");
}
