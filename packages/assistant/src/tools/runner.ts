import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { EventLog } from "../events/eventLog.ts";
import type { Logger } from "../log/logger.ts";
import { redact } from "../util/redact.ts";
import type { QueueItem, ReviewQueue } from "./approvals/queue.ts";
import { summarizeArguments } from "./approvals/queue.ts";
import type { SandboxStatus } from "./commandSandbox.ts";
import { markUntrusted, truncateOutput } from "./output.ts";
import { type DaemonFiles, MOVED } from "./policy/daemonFiles.ts";
import { approvalNotice, decisionScope } from "./policy/decisionScope.ts";
import type { Decision, ToolRequest } from "./policy/types.ts";
import type { PolicySource } from "./policySource.ts";
import type { ToolRegistry } from "./registry.ts";
import {
  type PermitRequest,
  protectedDenied,
  RESOURCE_REQUESTS,
  TOOL_CALL_STATUSES,
  type Tool,
  type ToolContext,
  ToolDenied,
  ToolFailure,
} from "./tool.ts";

// Runs one tool call the same way for every caller (agent loop, POST /api/tools/:name/invoke): arguments
// validated by the tool's zod schema, every resource asked of the policy, `ask` answered through the review
// queue, failures turned into results the model can act on, output cut and marked, events emitted.

export const toolResultSchema = z
  .object({
    call_id: z.string(),
    tool: z.string(),
    status: z.enum(TOOL_CALL_STATUSES),
    /** What the model reads: truncated, outside content fenced as untrusted data, secrets redacted. */
    output: z.string(),
    truncated: z.boolean(),
    /** For `denied`: the deciding rule and where it lives. */
    rule: z.string().optional(),
    source: z.string().optional(),
    /** The review-queue item the call waited on, if any. */
    queue_item_id: z.string().optional(),
  })
  .meta({ id: "ToolResult" });

export type ToolResult = z.infer<typeof toolResultSchema>;

export interface InvokeOptions {
  taskId?: string;
  sessionId?: string;
  signal?: AbortSignal;
  /** Called when the call starts waiting in the review queue (the invoke route then answers 202). */
  onApprovalRequested?: (item: QueueItem) => void;
  /** Called when that item is final (approved, denied or expired): the task runs again. */
  onApprovalResolved?: (item: QueueItem) => void;
  onProgress?: (text: string) => void;
  /** The task's workspace; default the data directory's workspace/. */
  workspace?: string;
}

export interface ToolRunnerOptions {
  tools: ToolRegistry;
  policy: PolicySource;
  queue: Pick<ReviewQueue, "request" | "waitFor" | "expire">;
  events: Pick<EventLog, "emit">;
  logger: Pick<Logger, "warn">;
  env: NodeJS.ProcessEnv;
  settings: ToolContext["settings"];
  workspace: string;
  journalPath: string;
  secret: (key: string) => string | null;
  daemonFiles: DaemonFiles;
  sandbox: () => SandboxStatus;
}

const PREVIEW_CHARS = 2000;

export class ToolRunner {
  readonly #tools: ToolRegistry;
  readonly #options: ToolRunnerOptions;
  /** Aborted when the daemon stops: running commands are killed, waits in the queue end. */
  readonly #shutdown = new AbortController();

  constructor(options: ToolRunnerOptions) {
    this.#tools = options.tools;
    this.#options = options;
  }

  /** Cancels every call in flight (daemon stop). */
  close(): void {
    this.#shutdown.abort(new Error("the daemon is stopping"));
  }

  list(): Tool[] {
    return this.#tools.list();
  }

  get(name: string): Tool | undefined {
    return this.#tools.get(name);
  }

  async invoke(name: string, args: unknown, options: InvokeOptions = {}): Promise<ToolResult> {
    const callId = randomUUID();
    const scope = {
      ...(options.taskId ? { task_id: options.taskId } : {}),
      ...(options.sessionId ? { session_id: options.sessionId } : {}),
    };
    const argsRecord =
      args && typeof args === "object" && !Array.isArray(args) ? (args as Record<string, unknown>) : { value: args };
    const { events } = this.#options;
    events.emit(
      "tool_call_requested",
      { call_id: callId, tool: name, arguments_summary: summarizeArguments(argsRecord) },
      scope,
    );
    const started = Date.now();
    const result = await this.#run(callId, name, args, argsRecord, options);
    events.emit(
      "tool_call_completed",
      {
        call_id: callId,
        tool: name,
        status: result.status,
        rule: result.rule ?? null,
        queue_item_id: result.queue_item_id ?? null,
        truncated: result.truncated,
        duration_ms: Date.now() - started,
        output_preview: result.output.slice(0, PREVIEW_CHARS),
      },
      scope,
    );
    return result;
  }

  async #run(
    callId: string,
    name: string,
    args: unknown,
    argsRecord: Record<string, unknown>,
    options: InvokeOptions,
  ): Promise<ToolResult> {
    const base = { call_id: callId, tool: name };
    const tool = this.#tools.get(name);
    if (!tool) {
      const known = this.#tools
        .list()
        .map((t) => t.name)
        .join(", ");
      return { ...base, status: "error", output: `Unknown tool ${name}. Available tools: ${known}.`, truncated: false };
    }
    const parsed = tool.parameters.safeParse(args);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((i) => `${i.path.join(".") || "arguments"}: ${i.message}`).join("; ");
      return {
        ...base,
        status: "invalid_arguments",
        output: `Invalid arguments for ${name}: ${problems}. Call it again with valid arguments.`,
        truncated: false,
      };
    }
    let queueItemId: string | undefined;
    let approvedItem: string | undefined;
    const mayAsk = [...RESOURCE_REQUESTS[tool.resource], ...(tool.asks ?? [])];
    /** Set when the tool asked for a kind it may not: the call fails even if the tool caught the refusal. */
    let contractBroken: string | undefined;
    const signal = options.signal ? AbortSignal.any([options.signal, this.#shutdown.signal]) : this.#shutdown.signal;
    const policy = this.#options.policy;
    const snapshot = policy.current();
    const ctx: ToolContext = {
      cwd: policy.cwd,
      workspace: options.workspace ?? this.#options.workspace,
      journalPath: this.#options.journalPath,
      env: this.#options.env,
      settings: this.#options.settings,
      policy: snapshot.policy,
      daemonFiles: this.#options.daemonFiles,
      sandbox: this.#options.sandbox,
      signal,
      ...(options.taskId ? { taskId: options.taskId } : {}),
      ...(options.sessionId ? { sessionId: options.sessionId } : {}),
      secret: this.#options.secret,
      progress: (text) => options.onProgress?.(text),
      permit: async (asked: PermitRequest): Promise<Decision> => {
        // Stamped with the calling tool's own name, whatever the request says: a tool only ever asks for itself.
        const request: ToolRequest = { ...asked, tool: name };
        if (!mayAsk.includes(request.kind)) {
          contractBroken ??= `${name} asked for a ${request.kind} permission, but a tool with resource ${tool.resource} may only ask for ${mayAsk.join(" or ")} (a bug in the tool: nothing was allowed)`;
          throw new Error(contractBroken);
        }
        // The engine decides on paths without I/O; whether those paths still mean the daemon's folder is one stat.
        const fileRequest = request.kind === "read" || request.kind === "write" || request.kind === "command";
        if (fileRequest && this.#options.daemonFiles.moved()) throw protectedDenied(MOVED);
        const decision = policy.current().engine.decide(request);
        if (decision.effect === "allow") return decision;
        if (decision.effect === "deny") {
          throw new ToolDenied(decision.rule, decision.source, `Blocked by ${decision.rule} (${decision.source}).`);
        }
        // One approval covers the call the operator saw (its arguments), not each resource it asks about.
        if (approvedItem)
          return { effect: "allow", rule: `review queue item ${approvedItem} approved`, source: "review queue" };
        const notice = approvalNotice(request);
        const item = this.#options.queue.request({
          tool: name,
          arguments: argsRecord,
          rule: decision.rule,
          scope: decisionScope(request),
          ...(notice ? { notice } : {}),
          ...(options.taskId ? { task_id: options.taskId } : {}),
          ...(options.sessionId ? { session_id: options.sessionId } : {}),
        });
        queueItemId = item.id;
        options.onApprovalRequested?.(item);
        const final = await this.#options.queue.waitFor(item.id, signal).catch((error: unknown) => {
          // The task ended while the call waited (cancelled, stopped): the item expires with it, so approving
          // it later says so instead of approving a call that will never run.
          if (signal.aborted) expireQuietly(this.#options.queue, item.id);
          throw error;
        });
        options.onApprovalResolved?.(final);
        if (final.status === "approved") {
          approvedItem = item.id;
          return { effect: "allow", rule: `review queue item ${item.id} approved`, source: "review queue" };
        }
        const note = final.note ? ` (note: ${final.note})` : "";
        const what =
          final.status === "denied"
            ? `The user denied this call in the review queue${note}.`
            : `Nobody approved this call in time; review queue item ${item.id} expired${note}.`;
        throw new ToolDenied(`review queue item ${item.id} ${final.status}`, "review queue", what, item.id);
      },
    };
    const withQueue = () => (queueItemId ? { queue_item_id: queueItemId } : {});
    const broken = (problem: string): ToolResult => {
      this.#options.logger.warn("a tool asked for a permission its resource does not allow", { tool: name, problem });
      return { ...base, status: "error", output: `${name} failed: ${problem}`, truncated: false, ...withQueue() };
    };
    try {
      // A tool without a resource (message, web_search, plugin tools, use_skill) is asked about as a whole here,
      // so no such tool can forget to ask; resource tools ask per path, command or host inside execute.
      if (tool.resource === "none") await ctx.permit({ kind: "tool" });
      const out = await tool.execute(parsed.data, ctx);
      if (contractBroken) return broken(contractBroken);
      const cut = truncateOutput(redact(out.text));
      const text = out.untrusted ? markUntrusted(cut.text, out.untrusted) : cut.text;
      return { ...base, status: "ok", output: text, truncated: cut.truncated, ...withQueue() };
    } catch (error) {
      if (contractBroken) return broken(contractBroken);
      if (error instanceof ToolDenied) {
        return {
          ...base,
          status: "denied",
          output: `${error.message} The call was not run. Do not retry it unchanged: ask the user, or choose another way.`,
          truncated: false,
          rule: error.rule,
          source: error.source,
          ...withQueue(),
        };
      }
      if (signal.aborted) {
        return { ...base, status: "error", output: `${name} was cancelled.`, truncated: false, ...withQueue() };
      }
      if (!(error instanceof ToolFailure)) {
        this.#options.logger.warn(`tool ${name} failed unexpectedly`, { error: (error as Error).message });
      }
      const message = truncateOutput(redact((error as Error).message)).text;
      return { ...base, status: "error", output: `${name} failed: ${message}`, truncated: false, ...withQueue() };
    }
  }
}

/** Expires a pending item whose call will not run; one already resolved (by the operator, by timeout) stays. */
function expireQuietly(queue: Pick<ReviewQueue, "expire">, id: string): void {
  try {
    queue.expire(id, "its task ended before anyone approved it");
  } catch {
    // already approved, denied or expired
  }
}
