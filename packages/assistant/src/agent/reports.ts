import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import type { EventPayload, StoredEvent } from "../events/registry.ts";
import { writeFileAtomic } from "../util/atomicWrite.ts";
import { TASK_STATUSES, type TaskRecord } from "./tasks.ts";

// The compact operator report of a task (docs/agent.md#reports): done[], needs_review[], failed[], next_steps[].
// It is built from the task's stored events, so a task interrupted by a crash gets the same report at the next
// start, and written to reports/<task_id>.json and .md (atomically).

const reportRefSchema = z.object({
  kind: z.enum(["file", "tool_call", "queue_item", "task"]),
  /** A path for files, an id otherwise. */
  id: z.string(),
});
export type ReportRef = z.infer<typeof reportRefSchema>;

const reportItemSchema = z.object({ text: z.string(), refs: z.array(reportRefSchema) }).meta({ id: "ReportItem" });
export type ReportItem = z.infer<typeof reportItemSchema>;

export const taskReportSchema = z
  .object({
    task_id: z.string(),
    session_id: z.string(),
    parent_id: z.string().nullable(),
    /** Absent in reports written before it was recorded. */
    task_type: z.string().nullable().optional(),
    status: z.enum(TASK_STATUSES),
    reason: z.string().nullable(),
    message: z.string(),
    reply: z.string().nullable(),
    rounds: z.number(),
    created_at: z.string(),
    finished_at: z.string().nullable(),
    done: z.array(reportItemSchema),
    needs_review: z.array(reportItemSchema),
    failed: z.array(reportItemSchema),
    next_steps: z.array(reportItemSchema),
    subtasks: z.array(z.object({ task_id: z.string(), task_type: z.string().nullable(), status: z.string() })),
  })
  .meta({ id: "TaskReport" });

export type TaskReport = z.infer<typeof taskReportSchema>;

/** A requested call, with its outcome once it completed. */
type CallInfo = EventPayload<"tool_call_requested"> & Partial<EventPayload<"tool_call_completed">>;

export const ROUND_LIMIT_REASON = "round_limit";
/** Starts the line an orchestrator reply ends with when ASSISTANT_MAX_CONCURRENT_DELEGATIONS cut its plan. */
export const DELEGATION_LIMIT_TAG = "[delegation limit]";

export function buildReport(
  task: TaskRecord,
  events: readonly StoredEvent[],
  extra: { pendingFollowUps?: string[]; subtasks?: TaskReport[] } = {},
): TaskReport {
  const report: TaskReport = {
    task_id: task.id,
    session_id: task.session_id,
    parent_id: task.parent_id,
    task_type: task.task_type,
    status: task.status,
    reason: task.reason,
    message: task.message,
    reply: task.reply,
    rounds: task.rounds,
    created_at: task.created_at,
    finished_at: task.finished_at,
    done: [],
    needs_review: [],
    failed: [],
    next_steps: [],
    subtasks: [],
  };
  const calls = new Map<string, CallInfo>();
  for (const event of events) {
    if (event.kind === "tool_call_requested") {
      calls.set(event.data.call_id, { ...event.data });
    } else if (event.kind === "tool_call_completed") {
      const call = calls.get(event.data.call_id);
      if (call) Object.assign(call, event.data);
    }
  }
  for (const call of calls.values()) addCall(report, call);

  const taskRef: ReportRef = { kind: "task", id: task.id };
  if (task.status === "completed" && task.reply) {
    report.done.push({ text: `Answered: ${firstLine(task.reply)}`, refs: [taskRef] });
  }
  if (task.reason === ROUND_LIMIT_REASON) {
    report.needs_review.push({
      text: "Stopped at the tool round limit before the work was finished.",
      refs: [taskRef],
    });
    report.next_steps.push({
      text: "Continue with a follow-up message, or raise ASSISTANT_MAX_TOOL_ROUNDS.",
      refs: [taskRef],
    });
  } else if (task.status === "failed") {
    const interrupted = task.reason === "interrupted";
    report.failed.push({
      text: interrupted
        ? "Interrupted: the daemon stopped while the task was running."
        : `The task failed: ${task.reason ?? "unknown error"}`,
      refs: [taskRef],
    });
    report.next_steps.push({
      // Every surface shows this text: the chat syntax is labelled as such, never given as a CLI command.
      text: `Run it again as a new task: ${JSON.stringify(firstLine(task.message))} (in the chat: /task create)`,
      refs: [taskRef],
    });
  } else if (task.status === "cancelled") {
    report.needs_review.push({
      text: `Cancelled${task.reason ? `: ${task.reason}` : ""}; the work may be partial.`,
      refs: [taskRef],
    });
  }
  if (task.task_type === "orchestrator") {
    for (const line of (task.reply ?? "").split("\n")) {
      if (!line.startsWith(DELEGATION_LIMIT_TAG)) continue;
      report.needs_review.push({ text: line.slice(DELEGATION_LIMIT_TAG.length).trim(), refs: [taskRef] });
      report.next_steps.push({
        text: "Ask for the remaining sub-tasks in a follow-up, or raise ASSISTANT_MAX_CONCURRENT_DELEGATIONS.",
        refs: [taskRef],
      });
    }
  }
  for (const text of extra.pendingFollowUps ?? []) {
    report.next_steps.push({ text: `Follow-up not delivered: ${firstLine(text)}`, refs: [taskRef] });
  }
  for (const sub of extra.subtasks ?? []) {
    report.subtasks.push({ task_id: sub.task_id, task_type: sub.task_type ?? null, status: sub.status });
    const tag = `[sub-task ${sub.task_id.slice(0, 8)}]`;
    const subRef: ReportRef = { kind: "task", id: sub.task_id };
    for (const key of ["done", "needs_review", "failed", "next_steps"] as const) {
      for (const item of sub[key]) report[key].push({ text: `${tag} ${item.text}`, refs: [subRef, ...item.refs] });
    }
  }
  return report;
}

function addCall(report: TaskReport, call: CallInfo): void {
  const refs: ReportRef[] = [{ kind: "tool_call", id: call.call_id }];
  const path = pathOf(call.arguments_summary);
  if (path) refs.push({ kind: "file", id: path });
  if (call.queue_item_id) refs.push({ kind: "queue_item", id: call.queue_item_id });
  const what = `${call.tool}${path ? ` ${path}` : ""}`;
  const summary = firstLine(stripFence(call.output_preview ?? ""));
  switch (call.status) {
    case "ok":
      report.done.push({ text: `${what}: ${summary}`, refs });
      if (call.tool === "write_file")
        report.needs_review.push({ text: `Review the change to ${path ?? "the file"}.`, refs });
      break;
    case "denied":
      if (call.queue_item_id) {
        report.needs_review.push({ text: `${what} was not approved (${call.rule ?? "review queue"}).`, refs });
      } else {
        report.failed.push({ text: `${what} was blocked by ${call.rule ?? "the policy"}.`, refs });
        report.next_steps.push({
          text: `If ${call.tool} should be allowed here, change tools_policy.yaml (${call.rule ?? "policy"}).`,
          refs,
        });
      }
      break;
    case undefined:
      report.failed.push({ text: `${what} did not finish.`, refs });
      break;
    default:
      report.failed.push({ text: `${what} failed: ${summary}`, refs });
  }
}

function pathOf(argumentsSummary: string): string | null {
  try {
    const args = JSON.parse(argumentsSummary) as Record<string, unknown>;
    if (typeof args.path === "string") return args.path;
  } catch {
    // not JSON: no path
  }
  return null;
}

function stripFence(text: string): string {
  return text.replace(/^<untrusted_data[^>]*>\n/, "");
}

function firstLine(text: string): string {
  const line = text.split("\n").find((l) => l.trim()) ?? "";
  return line.length > 200 ? `${line.slice(0, 200)}...` : line;
}

export function reportPaths(dir: string, taskId: string): { json: string; markdown: string } {
  return { json: join(dir, `${taskId}.json`), markdown: join(dir, `${taskId}.md`) };
}

export function writeReport(dir: string, report: TaskReport): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const paths = reportPaths(dir, report.task_id);
  writeFileAtomic(paths.json, `${JSON.stringify(report, null, 2)}\n`);
  writeFileAtomic(paths.markdown, reportMarkdown(report));
}

export function readReport(dir: string, taskId: string): TaskReport | null {
  try {
    return JSON.parse(readFileSync(reportPaths(dir, taskId).json, "utf8")) as TaskReport;
  } catch {
    return null;
  }
}

export function reportMarkdown(report: TaskReport): string {
  const section = (title: string, items: ReportItem[]) =>
    `## ${title}\n\n${items.length === 0 ? "- (none)" : items.map((i) => `- ${i.text}${refText(i.refs)}`).join("\n")}\n`;
  return [
    `# Task ${report.task_id}\n`,
    `- status: ${report.status}${report.reason ? ` (${report.reason})` : ""}`,
    `- message: ${firstLine(report.message)}`,
    `- created: ${report.created_at}; finished: ${report.finished_at ?? "-"}; rounds: ${report.rounds}\n`,
    section("Done", report.done),
    section("Needs review", report.needs_review),
    section("Failed", report.failed),
    section("Next steps", report.next_steps),
  ].join("\n");
}

function refText(refs: ReportRef[]): string {
  const shown = refs
    .filter((r) => r.kind !== "tool_call")
    .map((r) => (r.kind === "file" ? `\`${r.id}\`` : `${r.kind} ${r.id}`));
  return shown.length ? ` (${shown.join(", ")})` : "";
}
