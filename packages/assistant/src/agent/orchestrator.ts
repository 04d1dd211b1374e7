import { z } from "zod";
import type { DaemonSettings } from "../config/settings.ts";
import { CHAT_CATEGORIES } from "../llm/classify.ts";
import { isSystemTask } from "../llm/limits.ts";
import type { LlmRouter } from "../llm/router.ts";
import { RELATED_TYPES, TASK_TYPE_ALIASES } from "../llm/routing.ts";
import type { LanguageModelV4Prompt } from "../llm/types.ts";
import type { Logger } from "../log/logger.ts";
import { AppError } from "../util/errors.ts";
import { DELEGATION_LIMIT_TAG } from "./reports.ts";
import { type LiveEvent, MAX_MESSAGE_CHARS, type TaskService, type UnitRunner } from "./taskService.ts";
import type { TaskRecord } from "./tasks.ts";

// Sub-agent orchestration (the `orchestrator` task type). The orchestrator route plans: it answers a JSON list of
// sub-tasks, each for a sub-agent (an alias such as `code` or `search`, or a task type). Each sub-task runs as a
// child task (origin `subagent`, parent_id = the parent task) in a session of its own, at most
// ASSISTANT_MAX_PARALLEL_SUBTASKS at once and at most ASSISTANT_MAX_CONCURRENT_DELEGATIONS per request. The
// orchestrator route then writes the final answer from the sub-results (or they are joined under headings). A plan
// that is not usable (no model, invalid JSON, no sub-task) hands the request back to the plain agent loop.

/** How much of each sub-result goes into the synthesis prompt. */
const RESULT_CHARS = 8_000;
const ORCHESTRATOR = "orchestrator";

/** ASSISTANT_MAX_CONCURRENT_DELEGATIONS (sub-tasks per request) and ASSISTANT_MAX_PARALLEL_SUBTASKS (at once). */
type OrchestrationLimits = Pick<DaemonSettings, "maxConcurrentDelegations" | "maxParallelSubtasks">;

type Router = Pick<LlmRouter, "complete" | "resolve" | "configuration">;

/** The names a plan may give as `agent`: the aliases, then the task types the router knows, sorted. */
export function delegationAgents(router: Pick<LlmRouter, "configuration">): {
  aliases: string[];
  taskTypes: string[];
} {
  const taskTypes = new Set<string>([
    ...CHAT_CATEGORIES,
    ...Object.keys(RELATED_TYPES),
    ...Object.keys(router.configuration.task_types),
  ]);
  // No nested orchestration, no internal task types, no image backend.
  for (const name of [...taskTypes]) {
    if (isSystemTask(name) || name === "image_generation") taskTypes.delete(name);
  }
  return { aliases: Object.keys(TASK_TYPE_ALIASES), taskTypes: [...taskTypes].sort() };
}

/** The task type a sub-agent name runs as (aliases mapped by the routing module). */
export function subagentTaskType(agent: string): string {
  return TASK_TYPE_ALIASES[agent] ?? agent;
}

// ---- plan ------------------------------------------------------------------------------------------------------

export interface PlannedSubtask {
  agent: string;
  taskType: string;
  task: string;
}

const planSchema = z.strictObject({
  subtasks: z.array(
    z.strictObject({
      agent: z.string().trim().min(1).max(64),
      task: z.string().trim().min(1).max(MAX_MESSAGE_CHARS),
    }),
  ),
});

/** The sub-tasks of a plan answer, or null when it is not a usable plan (not JSON, wrong shape, unknown agent). */
export function parsePlan(text: string, known: ReadonlySet<string>): PlannedSubtask[] | null {
  const fenced = /```(?:json)?\s*\n?([\s\S]*?)```/i.exec(text);
  const body = (fenced ? fenced[1]! : text).trim();
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return null;
  }
  const parsed = planSchema.safeParse(json);
  if (!parsed.success) return null;
  const subtasks: PlannedSubtask[] = [];
  for (const { agent, task } of parsed.data.subtasks) {
    const name = known.has(agent) ? agent : agent.toLowerCase();
    if (!known.has(name)) return null;
    subtasks.push({ agent: name, taskType: subagentTaskType(name), task });
  }
  return subtasks;
}

function planPrompt(
  agentName: string,
  agents: { aliases: string[]; taskTypes: string[] },
  max: number,
  message: string,
): LanguageModelV4Prompt {
  const aliasText = agents.aliases.map((a) => `${a} (${subagentTaskType(a)})`).join(", ");
  const system = [
    `You are the orchestrator of ${agentName}. Split the user's request into independent sub-tasks for sub-agents.`,
    `Agents: ${aliasText}, or a task type: ${agents.taskTypes.join(", ")}.`,
    `Answer with JSON only: {"subtasks":[{"agent":"<agent>","task":"<self-contained instruction>"}]}, at most ${max} sub-tasks.`,
    'Sub-agents do not see the request: each task must say everything needed. A small request gets {"subtasks":[]}.',
  ].join("\n");
  return [
    { role: "system", content: system },
    { role: "user", content: [{ type: "text", text: message }] },
  ];
}

// ---- run -------------------------------------------------------------------------------------------------------

export interface SubResult {
  agent: string;
  taskType: string;
  task: string;
  /** The child task, or null when it was never started (cancelled first, or the daemon refused it). */
  taskId: string | null;
  status: TaskRecord["status"] | "not_started";
  reply: string;
}

type Agent = Pick<TaskService, "submit" | "wait" | "cancel" | "tasks">;

/** Runs `worker` over `items`, at most `limit` at once; items not started when `signal` aborts get `skipped`. */
export async function runPool<T, R>(
  items: readonly T[],
  limit: number,
  signal: AbortSignal,
  worker: (item: T, index: number) => Promise<R>,
  skipped: (item: T, index: number) => R,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const index = next++;
      const item = items[index] as T;
      results[index] = signal.aborted ? skipped(item, index) : await worker(item, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}

async function runSubtasks(
  agent: Agent,
  parent: TaskRecord,
  subtasks: PlannedSubtask[],
  maxParallel: number,
  signal: AbortSignal,
  emit: (event: LiveEvent) => void,
  logger: Pick<Logger, "warn">,
): Promise<SubResult[]> {
  const active = new Set<string>();
  const cancel = (id: string) => {
    try {
      agent.cancel(id, "the parent task was cancelled");
    } catch {
      // already finished
    }
  };
  const onAbort = () => {
    for (const id of active) cancel(id);
  };
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    return await runPool(
      subtasks,
      maxParallel,
      signal,
      async (sub): Promise<SubResult> => {
        let child: TaskRecord;
        try {
          child = agent.submit({ message: sub.task, origin: "subagent", parentId: parent.id, taskType: sub.taskType });
        } catch (error) {
          logger.warn("a sub-task could not be started", { task_id: parent.id, error: (error as Error).message });
          return { ...sub, taskId: null, status: "not_started", reply: (error as Error).message };
        }
        active.add(child.id);
        if (signal.aborted) cancel(child.id);
        emit({ type: "tool_call", id: child.id, name: "delegate", arguments: { agent: sub.agent, task: sub.task } });
        let done: TaskRecord;
        try {
          done = await agent.wait(child.id);
        } catch {
          done = agent.tasks.get(child.id); // failed: the record says why
        } finally {
          active.delete(child.id);
        }
        const reply = done.reply ?? (done.reason ? `(${done.reason})` : "");
        emit({
          type: "tool_result",
          id: child.id,
          name: "delegate",
          status: done.status === "completed" ? "ok" : "error",
          output: `${done.status}: ${firstLine(reply)}`,
        });
        return { ...sub, taskId: child.id, status: done.status, reply };
      },
      (sub) => ({ ...sub, taskId: null, status: "not_started", reply: "" }),
    );
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}

// ---- merge -----------------------------------------------------------------------------------------------------

function synthesisPrompt(message: string, results: SubResult[]): LanguageModelV4Prompt {
  const parts = results.map((r, i) => {
    const reply = r.reply.length > RESULT_CHARS ? `${r.reply.slice(0, RESULT_CHARS)}...` : r.reply;
    return `### ${i + 1}. ${r.agent} (${r.status})\nTask: ${r.task}\nResult:\n${reply || "(no reply)"}`;
  });
  return [
    {
      role: "system",
      content:
        "You are the orchestrator. Sub-agents worked on parts of the user's request. Write the final answer to the " +
        "request from their results; say which parts failed or are missing. Answer in the language of the request.",
    },
    { role: "user", content: [{ type: "text", text: `Request:\n${message}\n\nResults:\n\n${parts.join("\n\n")}` }] },
  ];
}

/** The reply when no model can synthesise: each sub-result under a heading. */
export function concatenateResults(results: SubResult[]): string {
  return results
    .map((r, i) => `## ${i + 1}. ${r.agent}: ${firstLine(r.task)} (${r.status})\n\n${r.reply || "(no reply)"}`)
    .join("\n\n");
}

// ---- the runner ------------------------------------------------------------------------------------------------

export interface OrchestratorDeps {
  agent: Agent;
  router: Router;
  settings: OrchestrationLimits;
  logger: Pick<Logger, "warn" | "info">;
  /** The main agent's name (agent_profile.json, as it is now). */
  agentName: () => string;
}

/** The UnitRunner for `orchestrator` tasks (TaskService.setOrchestrator). */
export function createOrchestrator(deps: OrchestratorDeps): UnitRunner {
  const limits = deps.settings;
  return async (task, message, signal, emit) => {
    const agents = delegationAgents(deps.router);
    const known = new Set([...agents.aliases, ...agents.taskTypes]);
    let planned: PlannedSubtask[] | null;
    try {
      const plan = await deps.router.complete({
        taskType: ORCHESTRATOR,
        prompt: planPrompt(deps.agentName(), agents, limits.maxConcurrentDelegations, message),
        sessionId: task.session_id,
        signal,
      });
      planned = plan.provider === "assistant_core" ? null : parsePlan(plan.text, known);
    } catch (error) {
      if (signal.aborted) throw error;
      deps.logger.warn("orchestration planning failed; the plain agent loop runs", {
        task_id: task.id,
        error: (error as Error).message,
      });
      return null;
    }
    if (!planned || planned.length === 0) {
      deps.logger.info("no usable orchestration plan; the plain agent loop runs", { task_id: task.id });
      return null;
    }
    const subtasks = planned.slice(0, limits.maxConcurrentDelegations);
    const results = await runSubtasks(
      deps.agent,
      task,
      subtasks,
      limits.maxParallelSubtasks,
      signal,
      emit,
      deps.logger,
    );
    if (signal.aborted) throw signal.reason ?? new AppError("conflict", "cancelled");

    let reply = "";
    try {
      const merged = await deps.router.complete({
        taskType: ORCHESTRATOR,
        prompt: synthesisPrompt(message, results),
        sessionId: task.session_id,
        signal,
      });
      if (merged.provider !== "assistant_core") reply = merged.text.trim();
    } catch (error) {
      if (signal.aborted) throw error;
      deps.logger.warn("orchestration synthesis failed; the sub-results are joined", {
        task_id: task.id,
        error: (error as Error).message,
      });
    }
    if (!reply) reply = concatenateResults(results);
    if (planned.length > subtasks.length) {
      reply += `\n\n${DELEGATION_LIMIT_TAG} The plan had ${planned.length} sub-tasks; only the first ${subtasks.length} ran (ASSISTANT_MAX_CONCURRENT_DELEGATIONS=${limits.maxConcurrentDelegations}).`;
    }
    emit({ type: "token", delta: reply });
    return { reply, rounds: 1 + subtasks.length };
  };
}

// ---- GET /api/agents -------------------------------------------------------------------------------------------

const agentListingSchema = z
  .object({
    name: z.string(),
    kind: z.enum(["main", "orchestrator", "alias", "task_type"]),
    description: z.string(),
    /** The task type it runs as; null for the main agent (it classifies each message). */
    task_type: z.string().nullable(),
    /** The llm_router.yaml entry used (`default` when none matches), and its primary target. */
    route: z.string().nullable(),
    provider: z.string().nullable(),
    model: z.string().nullable(),
  })
  .meta({ id: "Agent" });

export type AgentListing = z.infer<typeof agentListingSchema>;

export const agentListSchema = z
  .object({
    agents: z.array(agentListingSchema),
    limits: z.object({ max_concurrent_delegations: z.number(), max_parallel_subtasks: z.number() }),
  })
  .meta({ id: "AgentList" });

/** The loaded agents: the main agent, the orchestrator and every sub-agent a plan may name, with the limits. */
export function listAgents(deps: {
  agentName: string;
  router: Pick<LlmRouter, "resolve" | "configuration">;
  settings: OrchestrationLimits;
}): z.infer<typeof agentListSchema> {
  const routed = (name: string, kind: AgentListing["kind"], taskType: string, description: string): AgentListing => {
    const route = deps.router.resolve(taskType);
    const primary = route.targets[0];
    return {
      name,
      kind,
      description,
      task_type: taskType,
      route: route.source,
      provider: primary?.provider ?? null,
      model: primary?.model ?? null,
    };
  };
  const { aliases, taskTypes } = delegationAgents(deps.router);
  const limits = deps.settings;
  return {
    agents: [
      {
        name: deps.agentName,
        kind: "main",
        description: "The main agent (agent_profile.json); each message is classified into a task type",
        task_type: null,
        route: null,
        provider: null,
        model: null,
      },
      routed(ORCHESTRATOR, "orchestrator", ORCHESTRATOR, "Splits a large request into sub-tasks for sub-agents"),
      ...aliases.map((a) => routed(a, "alias", subagentTaskType(a), `Sub-agent alias of ${subagentTaskType(a)}`)),
      ...taskTypes.map((t) => routed(t, "task_type", t, `Sub-agent on the ${t} route`)),
    ],
    limits: {
      max_concurrent_delegations: limits.maxConcurrentDelegations,
      max_parallel_subtasks: limits.maxParallelSubtasks,
    },
  };
}

function firstLine(text: string): string {
  const line = text.split("\n").find((l) => l.trim()) ?? "";
  return line.length > 200 ? `${line.slice(0, 200)}...` : line;
}
