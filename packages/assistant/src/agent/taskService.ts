import { z } from "zod";
import type { DaemonSettings } from "../config/settings.ts";
import type { EventLog } from "../events/eventLog.ts";
import type { EventKind, EventPayload } from "../events/registry.ts";
import { classifyMessage } from "../llm/classify.ts";
import type { LlmRouter } from "../llm/router.ts";
import type { Logger } from "../log/logger.ts";
import type { ToolServices } from "../tools/services.ts";
import { AppError, isAppError } from "../util/errors.ts";
import { historyFor } from "./compaction.ts";
import { agentDebugLog } from "./debugLog.ts";
import { type AgentEvent, runAgentUnit } from "./loop.ts";
import { buildPrompt } from "./prompt.ts";
import { buildReport, ROUND_LIMIT_REASON, readReport, type TaskReport, writeReport } from "./reports.ts";
import type { SessionStore } from "./sessions.ts";
import {
  type DeliveryMode,
  FINAL_STATUSES,
  type QueuedMessage,
  queuedMessageSchema,
  TASK_STATUSES,
  type TaskOrigin,
  type TaskRecord,
  type TaskStatus,
  type TaskStore,
} from "./tasks.ts";
import { offeredTools, unitPrompt } from "./toolOffer.ts";

// Runs tasks (docs/agent.md#tasks): a message becomes a task that runs the agent loop with the session's history.
// Tasks of one session run one after another in creation order; sessions run in parallel. Live events (tokens,
// tool calls, approvals, state) go to subscribers; durable ones to the event log. Steering messages are injected
// after the current LLM turn; follow-ups (and steering that arrived too late for the last turn) run as the next
// work unit. At the end the report is written. At start, tasks that were running are failed as `interrupted`
// and queued ones run again.

export const MAX_MESSAGE_CHARS = 100_000;
const MAX_KEPT_ERRORS = 200;

/** A task's status changed (live; the stored event is task_state_changed). */
export const liveStateSchema = z.object({
  type: z.literal("state"),
  status: z.enum(TASK_STATUSES),
  reason: z.string().nullable(),
});

/** A task's undelivered steering and follow-up messages. */
export const taskQueueSchema = z
  .object({ task_id: z.string(), steering: z.array(queuedMessageSchema), follow_up: z.array(queuedMessageSchema) })
  .meta({ id: "TaskQueue" });

export type TaskQueue = z.infer<typeof taskQueueSchema>;

export type LiveEvent = AgentEvent | z.infer<typeof liveStateSchema> | { type: "done"; task: TaskRecord };

export interface SubmitRequest {
  message: string;
  sessionId?: string;
  taskType?: string;
  origin: TaskOrigin;
  parentId?: string;
}

/** Runs a work unit another way (sub-agent orchestration); null lets the plain agent loop run it. */
export type UnitRunner = (
  task: TaskRecord,
  message: string,
  signal: AbortSignal,
  emit: (event: LiveEvent) => void,
) => Promise<{ reply: string; rounds: number } | null>;

export interface TaskServiceDeps {
  tasks: TaskStore;
  sessions: SessionStore;
  router: Pick<LlmRouter, "stream" | "complete">;
  tools: ToolServices;
  events: Pick<EventLog, "emit" | "list">;
  reportsDir: string;
  settings: Pick<DaemonSettings, "maxToolRounds" | "maxContextTokens" | "agentDebug">;
  logger: Pick<Logger, "warn" | "error" | "info">;
  /** The system prompt (agent_profile.json). */
  systemPrompt: () => string;
  /** The main agent's name (agent_profile.json), for GET /api/agents. */
  agentName?: () => string;
  /**
   * Routing rules of plugins and skills: a message that arrives without a task type and matches one goes to the
   * rule's task type or agent, or gets the rule's skill instructions in its prompt.
   */
  route?: (message: string) => MessageRoute | null;
  /** The second brain: memories in the prompt, learning after replies, the flush before compaction. */
  memory?: TaskMemory;
}

/** What the task runner needs from memory (memory/memoryService.ts implements it). */
export interface TaskMemory {
  promptContext(message: string, signal?: AbortSignal): Promise<string | null>;
  learnAfter(sessionId: string, taskId: string | null): void;
  /** A person's new message in the session: learning from it waits, so it never competes with the answer. */
  userWrote(sessionId: string): void;
  flush(sessionId: string, throughSeq: number, signal?: AbortSignal): Promise<void>;
}

/** Conversations a person had: learning reads these, not the generated prompts of schedules and missions. */
const LEARNING_ORIGINS = new Set<TaskOrigin>(["chat", "api", "openai"]);

export interface MessageRoute {
  taskType?: string;
  /** Instructions added to the prompt (a skill's body), with where they come from. */
  instructions?: { source: string; text: string };
  /** The plugin whose routing rule matched: its tools are the likeliest to be needed (toolOffer.ts). */
  plugin?: string;
}

interface Running {
  controller: AbortController;
  cancelReason: string | null;
}

export class TaskService {
  readonly #deps: TaskServiceDeps;
  readonly #running = new Map<string, Running>();
  readonly #listeners = new Map<string, Set<(event: LiveEvent) => void>>();
  readonly #waiters = new Map<string, Set<(task: TaskRecord) => void>>();
  readonly #chains = new Map<string, Promise<void>>();
  /**
   * Running tasks that were sent steering or follow-up messages (deliver() takes them for running tasks only):
   * the others skip the queue lookups after every LLM turn.
   */
  readonly #delivered = new Set<string>();
  /** The error a failed task ended with, for callers waiting on it (the most recent MAX_KEPT_ERRORS). */
  readonly #errors = new Map<string, AppError>();
  #orchestrate: UnitRunner | null = null;
  #closed = false;

  constructor(deps: TaskServiceDeps) {
    this.#deps = deps;
  }

  /** Plugs in sub-agent orchestration (orchestrator.ts). */
  setOrchestrator(runner: UnitRunner): void {
    this.#orchestrate = runner;
  }

  get tasks(): TaskStore {
    return this.#deps.tasks;
  }

  get agentName(): string {
    return this.#deps.agentName?.() ?? "Assistant";
  }

  /** Daemon start: running tasks of a dead daemon fail as interrupted (with a report); queued ones run. */
  recover(): { interrupted: number; resumed: number } {
    const { tasks } = this.#deps;
    const stale = tasks.withStatus("running", "waiting_approval");
    for (const task of stale) {
      const failed = tasks.transition(task.id, "failed", { reason: "interrupted" });
      this.#emit("task_state_changed", { status: "failed", previous: task.status, reason: "interrupted" }, failed);
      this.#writeReport(failed);
    }
    const queued = tasks.withStatus("queued");
    for (const task of queued) this.#schedule(task);
    return { interrupted: stale.length, resumed: queued.length };
  }

  /** Validates and records a task, then schedules it behind the session's earlier tasks. */
  submit(request: SubmitRequest): TaskRecord {
    if (this.#closed) throw new AppError("conflict", "the daemon is stopping; try again after it restarts");
    const message = checkMessage(request.message);
    const { sessions, tasks } = this.#deps;
    const task = tasks.atomically(() => {
      const session = request.sessionId ? sessions.get(request.sessionId) : sessions.create();
      const created = tasks.create({
        sessionId: session.id,
        message,
        origin: request.origin,
        taskType: request.taskType ?? this.#deps.route?.(message)?.taskType ?? classifyMessage(message).category,
        ...(request.parentId ? { parentId: request.parentId } : {}),
      });
      this.#emit(
        "task_created",
        {
          origin: created.origin,
          task_type: created.task_type,
          parent_id: created.parent_id,
          message_preview: message.slice(0, 200),
        },
        created,
      );
      return created;
    });
    if (LEARNING_ORIGINS.has(task.origin)) this.#deps.memory?.userWrote(task.session_id);
    this.#schedule(task);
    return task;
  }

  /** The task running (or waiting for approval) in a session, if any. */
  activeTask(sessionId: string): TaskRecord | undefined {
    for (const id of this.#running.keys()) {
      const task = this.#deps.tasks.find(id);
      if (task && task.session_id === sessionId && !FINAL_STATUSES.has(task.status)) return task;
    }
    return undefined;
  }

  /** Queues a steering or follow-up message on a running task; 409 when the task is not running. */
  deliver(taskId: string, mode: DeliveryMode, text: string): QueuedMessage {
    const message = checkMessage(text);
    const task = this.#deps.tasks.get(taskId);
    if (!this.#running.has(task.id) || FINAL_STATUSES.has(task.status)) {
      throw new AppError("conflict", `task ${task.id} is ${task.status}, not running: send the message on its own`, {
        task_id: task.id,
        status: task.status,
      });
    }
    const queued = this.#deps.tasks.enqueue(task.id, mode, message);
    this.#delivered.add(task.id);
    const kind = mode === "steering" ? "user_steering_queued" : "user_follow_up_queued";
    this.#emit(kind, { queue_id: queued.id, text_preview: message.slice(0, 200) }, task);
    return queued;
  }

  queueOf(taskId: string): TaskQueue {
    const task = this.#deps.tasks.get(taskId);
    return {
      task_id: task.id,
      steering: this.#deps.tasks.pending(task.id, "steering"),
      follow_up: this.#deps.tasks.pending(task.id, "follow_up"),
    };
  }

  clearQueue(taskId: string): { task_id: string; cleared: number } {
    const task = this.#deps.tasks.get(taskId);
    return { task_id: task.id, cleared: this.#deps.tasks.clearQueue(task.id) };
  }

  /** Cancels a queued or running task; cancelling a finished one is a 409. */
  cancel(taskId: string, reason = "cancelled by the user"): TaskRecord {
    const task = this.#deps.tasks.get(taskId);
    if (FINAL_STATUSES.has(task.status)) {
      throw new AppError("conflict", `task ${task.id} is already ${task.status}`, {
        task_id: task.id,
        status: task.status,
      });
    }
    const running = this.#running.get(task.id);
    if (running) {
      running.cancelReason = reason;
      running.controller.abort(new AppError("conflict", reason));
      return task;
    }
    const cancelled = this.#deps.tasks.transition(task.id, "cancelled", { reason });
    this.#emit("task_state_changed", { status: "cancelled", previous: task.status, reason }, cancelled);
    this.#finish(cancelled);
    return cancelled;
  }

  subscribe(taskId: string, listener: (event: LiveEvent) => void): () => void {
    let set = this.#listeners.get(taskId);
    if (!set) {
      set = new Set();
      this.#listeners.set(taskId, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.#listeners.delete(taskId);
    };
  }

  /** Resolves with the task once it is final; rejects with the AppError a failed task ended with. */
  wait(taskId: string, signal?: AbortSignal): Promise<TaskRecord> {
    const current = this.#deps.tasks.get(taskId);
    const settle = (task: TaskRecord): TaskRecord => {
      const error = this.#errors.get(task.id);
      if (task.status === "failed" && error) throw error;
      return task;
    };
    if (FINAL_STATUSES.has(current.status)) return Promise.resolve().then(() => settle(current));
    return new Promise((resolve, reject) => {
      let set = this.#waiters.get(taskId);
      if (!set) {
        set = new Set();
        this.#waiters.set(taskId, set);
      }
      const waiters = set;
      const onAbort = () => {
        waiters.delete(waiter);
        reject(signal?.reason);
      };
      const waiter = (task: TaskRecord) => {
        signal?.removeEventListener("abort", onAbort);
        try {
          resolve(settle(task));
        } catch (error) {
          reject(error);
        }
      };
      waiters.add(waiter);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** The operator report of a finished task. */
  report(taskId: string): TaskReport {
    const task = this.#deps.tasks.get(taskId);
    if (!FINAL_STATUSES.has(task.status)) {
      throw new AppError("conflict", `task ${task.id} is ${task.status}; its report is written when it ends`, {
        task_id: task.id,
        status: task.status,
      });
    }
    return readReport(this.#deps.reportsDir, task.id) ?? this.#buildReport(task);
  }

  /** Daemon stop: running tasks are cancelled (they are not failed as interrupted: the stop was clean). */
  async close(): Promise<void> {
    this.#closed = true;
    for (const running of this.#running.values()) {
      running.cancelReason = "the daemon stopped";
      running.controller.abort(new AppError("conflict", "the daemon stopped"));
    }
    await Promise.allSettled([...this.#chains.values()]);
  }

  #schedule(task: TaskRecord): void {
    const previous = this.#chains.get(task.session_id) ?? Promise.resolve();
    const next = previous
      .then(() => this.#run(task.id))
      .catch((error: unknown) => {
        this.#deps.logger.error("task runner failed", { task_id: task.id, error: (error as Error).message });
      });
    this.#chains.set(task.session_id, next);
    void next.then(() => {
      if (this.#chains.get(task.session_id) === next) this.#chains.delete(task.session_id);
    });
  }

  async #run(taskId: string): Promise<void> {
    const { tasks, sessions } = this.#deps;
    const queued = tasks.find(taskId);
    if (queued?.status !== "queued") return; // cancelled while it waited
    if (this.#closed) return; // stays queued: it runs after the next start
    const running: Running = { controller: new AbortController(), cancelReason: null };
    this.#running.set(taskId, running);
    const signal = running.controller.signal;
    let task = this.#setStatus(queued, "running");
    const taskType = task.task_type ?? classifyMessage(task.message).category;
    const outcome = {
      rounds: 0,
      provider: null as string | null,
      model: null as string | null,
      input_tokens: 0,
      output_tokens: 0,
      cost_usd: 0,
    };
    let reply = "";
    let limitHit = false;
    let usedTools = false;
    try {
      let message: string | null = task.message;
      while (message !== null) {
        const unit = await this.#runUnit(task, taskType, message, signal);
        outcome.rounds += unit.rounds;
        outcome.input_tokens += unit.usage.input;
        outcome.output_tokens += unit.usage.output;
        outcome.cost_usd += unit.costUsd;
        outcome.provider = unit.provider ?? outcome.provider;
        outcome.model = unit.model ?? outcome.model;
        reply = unit.reply;
        limitHit ||= unit.hitRoundLimit;
        usedTools ||= unit.calls.length > 0 || unit.rounds > 1;
        const answer = {
          role: "assistant" as const,
          content: reply,
          task_type: taskType,
          ...(unit.provider ? { provider: unit.provider } : {}),
          ...(unit.model ? { model: unit.model } : {}),
        };
        // The answer, the next unit's message and (at the end) the final state commit together.
        const step = tasks.atomically(() => {
          sessions.append(task.session_id, answer);
          const next = this.#nextUnitMessage(task);
          if (next !== null) return { next, done: null };
          const previous = tasks.get(taskId).status;
          const ended = tasks.transition(taskId, "completed", {
            ...outcome,
            reply,
            reason: limitHit ? ROUND_LIMIT_REASON : null,
          });
          this.#emit("task_state_changed", { status: "completed", previous, reason: ended.reason }, ended);
          return { next: null, done: ended };
        });
        message = step.next;
        if (step.done) task = step.done;
      }
      const done = task;
      this.#live(taskId, { type: "state", status: "completed", reason: done.reason });
      this.#finish(done, usedTools);
      // After the reply is out: learning never delays an answer.
      if (LEARNING_ORIGINS.has(done.origin)) this.#deps.memory?.learnAfter(done.session_id, done.id);
    } catch (error) {
      task = tasks.get(taskId);
      const cancelled = signal.aborted;
      const status: TaskStatus = cancelled ? "cancelled" : "failed";
      const reason = cancelled ? (running.cancelReason ?? "cancelled") : errorReason(error);
      if (!cancelled && isAppError(error)) {
        // Kept for callers that wait on the task; only the most recent ones, so nothing grows with uptime.
        this.#errors.set(taskId, error);
        if (this.#errors.size > MAX_KEPT_ERRORS) this.#errors.delete(this.#errors.keys().next().value!);
      }
      if (!cancelled && !isAppError(error)) {
        this.#deps.logger.error("task failed", { task_id: taskId, error: (error as Error).message });
      }
      const ended = tasks.transition(taskId, status, { ...outcome, reason, reply: reply || null });
      this.#emit("task_state_changed", { status, previous: task.status, reason }, ended);
      this.#live(taskId, { type: "state", status, reason });
      this.#finish(ended);
    } finally {
      this.#running.delete(taskId);
      this.#delivered.delete(taskId);
    }
  }

  async #runUnit(task: TaskRecord, taskType: string, message: string, signal: AbortSignal) {
    const { sessions, router } = this.#deps;
    const emit = (event: LiveEvent) => this.#onAgentEvent(task, event);
    // History is read before the new message is stored, so the prompt carries it once, at the end.
    const memory = this.#deps.memory;
    const history = await historyFor(
      {
        sessions,
        router,
        logger: this.#deps.logger,
        // Only people's conversations are learned from, not the generated prompts of schedules and missions.
        ...(memory && LEARNING_ORIGINS.has(task.origin)
          ? { beforeFold: (sessionId, through) => memory.flush(sessionId, through, signal) }
          : {}),
      },
      task.session_id,
      this.#deps.settings.maxContextTokens,
      signal,
    );
    sessions.append(task.session_id, { role: "user", content: message, task_type: taskType });
    if (this.#orchestrate && taskType === "orchestrator") {
      const result = await this.#orchestrate(task, message, signal, emit);
      if (result) {
        return {
          ...result,
          calls: [],
          hitRoundLimit: false,
          provider: null,
          model: null,
          usage: { input: 0, output: 0 },
          costUsd: 0,
        };
      }
    }
    const route = this.#deps.route?.(message);
    const remembered = await memory?.promptContext(message, signal);
    const { system, offer, textTools } = unitPrompt({
      base: this.#deps.systemPrompt(),
      message,
      ...(route?.instructions ? { instructions: route.instructions } : {}),
      ...(route?.plugin ? { plugin: route.plugin } : {}),
      ...(remembered ? { remembered } : {}),
      tools: offeredTools(this.#deps.tools),
    });
    const prompt = buildPrompt(system, history.summary, history.messages, message);
    return runAgentUnit(
      {
        router,
        tools: this.#deps.tools.runner,
        toolDefs: offer.defs,
        offered: offer.offered,
        textTools,
        maxRounds: this.#deps.settings.maxToolRounds,
        ...(this.#deps.settings.agentDebug ? { debug: agentDebugLog(this.#deps.logger, task.id, taskType) } : {}),
      },
      {
        taskId: task.id,
        sessionId: task.session_id,
        taskType,
        prompt,
        signal,
        emit,
        takeSteering: () => this.#take(task, "steering"),
        onWaiting: (waiting) => {
          const current = this.#deps.tasks.get(task.id);
          if (waiting && current.status === "running") this.#setStatus(current, "waiting_approval");
          if (!waiting && current.status === "waiting_approval") this.#setStatus(current, "running");
        },
      },
    );
  }

  /** The message of the next work unit: the first follow-up, or steering that came after the last turn. */
  #nextUnitMessage(task: TaskRecord): string | null {
    const [followUp] = this.#take(task, "follow_up", 1);
    if (followUp) return followUp.text;
    const late = this.#take(task, "steering");
    return late.length > 0 ? late.map((m) => m.text).join("\n\n") : null;
  }

  #take(task: TaskRecord, mode: DeliveryMode, max = Number.POSITIVE_INFINITY): Array<{ id: string; text: string }> {
    if (!this.#delivered.has(task.id)) return [];
    const taken = this.#deps.tasks.pending(task.id, mode).slice(0, max);
    for (const message of taken) {
      this.#deps.tasks.markApplied(message.id);
      const kind = mode === "steering" ? "user_steering_applied" : "user_follow_up_applied";
      this.#emit(kind, { queue_id: message.id }, task);
    }
    return taken.map((m) => ({ id: m.id, text: m.text }));
  }

  #onAgentEvent(task: TaskRecord, event: LiveEvent): void {
    if (event.type === "turn") {
      this.#emit(
        "message_delta",
        { round: event.round, text: event.text, provider: event.provider, model: event.model },
        task,
      );
    }
    this.#live(task.id, event);
  }

  #setStatus(task: TaskRecord, status: TaskStatus): TaskRecord {
    const next = this.#deps.tasks.atomically(() => {
      const moved = this.#deps.tasks.transition(task.id, status);
      this.#emit("task_state_changed", { status, previous: task.status, reason: null }, moved);
      return moved;
    });
    this.#live(task.id, { type: "state", status, reason: null });
    return next;
  }

  /**
   * Ends a task: report, live `done`, waiters. A plain answered chat turn (no tools), from `assistant chat` or an
   * OpenAI client, gets no report file (writing one costs two fsyncs per turn).
   */
  #finish(task: TaskRecord, usedTools = true): void {
    const chatTurn = task.origin === "chat" || task.origin === "openai";
    const plainChat = chatTurn && task.status === "completed" && task.reason === null && !usedTools;
    if (!plainChat) this.#writeReport(task);
    this.#live(task.id, { type: "done", task });
    const waiters = this.#waiters.get(task.id);
    this.#waiters.delete(task.id);
    for (const waiter of waiters ?? []) waiter(task);
    this.#listeners.delete(task.id);
  }

  #buildReport(task: TaskRecord): TaskReport {
    const { tasks, events, reportsDir } = this.#deps;
    const subtasks = tasks
      .list({ parentId: task.id, limit: 500 })
      .items.filter((t) => FINAL_STATUSES.has(t.status))
      .map((t) => readReport(reportsDir, t.id))
      .filter((r): r is TaskReport => r !== null);
    const pendingFollowUps = tasks.pending(task.id).map((m) => m.text);
    return buildReport(task, events.list({ taskId: task.id, limit: 10_000 }), { pendingFollowUps, subtasks });
  }

  /** Writes reports/<id>.json and .md; the report can always be rebuilt from the stored events. */
  #writeReport(task: TaskRecord): TaskReport {
    const report = this.#buildReport(task);
    try {
      writeReport(this.#deps.reportsDir, report);
    } catch (error) {
      this.#deps.logger.warn("the task report could not be written", {
        task_id: task.id,
        error: (error as Error).message,
      });
    }
    return report;
  }

  #live(taskId: string, event: LiveEvent): void {
    for (const listener of this.#listeners.get(taskId) ?? []) {
      try {
        listener(event);
      } catch {
        // a closed stream must not break the task
      }
    }
  }

  #emit<K extends EventKind>(kind: K, payload: EventPayload<K>, task: TaskRecord): void {
    this.#deps.events.emit(kind, payload, { task_id: task.id, session_id: task.session_id });
  }
}

function checkMessage(text: string): string {
  const message = typeof text === "string" ? text.trim() : "";
  if (!message) throw new AppError("invalid_request", "message is empty", { field: "message" });
  if (message.length > MAX_MESSAGE_CHARS) {
    throw new AppError("payload_too_large", `message is longer than ${MAX_MESSAGE_CHARS} characters`, {
      field: "message",
    });
  }
  return message;
}

function errorReason(error: unknown): string {
  if (isAppError(error)) return error.message;
  return `internal error: ${(error as Error).message ?? String(error)}`;
}
