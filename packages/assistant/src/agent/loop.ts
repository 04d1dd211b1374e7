import type { LanguageModelV4FunctionTool } from "@ai-sdk/provider";
import { z } from "zod";
import type { LlmRouter } from "../llm/router.ts";
import type { LanguageModelV4Prompt, TokenUsage } from "../llm/types.ts";
import type { ToolRunner } from "../tools/runner.ts";
import type { ToolInfo } from "../tools/services.ts";
import { TOOL_CALL_STATUSES, type ToolCallStatus } from "../tools/tool.ts";
import type { AgentDebugLog } from "./debugLog.ts";
import { answerLoadTools, LOAD_TOOLS } from "./loadTools.ts";
import { toolDefinition } from "./prompt.ts";
import { parseTextToolCalls, type TextToolSpec } from "./textToolCalls.ts";

// One work unit of the agent (docs/agent.md#the-tool-loop): up to ASSISTANT_MAX_TOOL_ROUNDS LLM turns. Each turn
// streams through the router with the tool schemas; native tool calls (and grammar-constrained ones from the embedded
// model) come as tool_call events, the text form `TOOL: <name> <args>` is parsed from the answer when there are none.
// Every call goes through the ToolRunner (policy, review queue). Steering messages are injected after the turn in which
// they arrived. The unit ends with an answer without tool calls, or at the round limit. Tools offered only in the
// tool index (toolOffer.ts) get their schema sent from the round after load_tools asked for it or after the model
// called them; such a call that had no schema yet and fails validation is answered with the schema.

/** What a work unit reports live, by `type` (the message routes stream these; see server/taskStream.ts). */
export const agentEventSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("route"), provider: z.string(), model: z.string() }),
  /** A route target failed or was skipped (sanitized reason); the router tries the next one. */
  z.object({ type: z.literal("fallback"), provider: z.string(), model: z.string(), reason: z.string() }),
  z.object({ type: z.literal("token"), delta: z.string() }),
  /** The streaming attempt failed after output; discard the text of this turn so far. */
  z.object({ type: z.literal("reset") }),
  z.object({ type: z.literal("turn"), round: z.number(), text: z.string(), provider: z.string(), model: z.string() }),
  z.object({ type: z.literal("tool_call"), id: z.string(), name: z.string(), arguments: z.unknown() }),
  z.object({
    type: z.literal("tool_result"),
    id: z.string(),
    name: z.string(),
    status: z.enum(TOOL_CALL_STATUSES),
    output: z.string(),
    queue_item_id: z.string().optional(),
  }),
  z.object({ type: z.literal("approval_requested"), queue_item_id: z.string(), tool: z.string(), rule: z.string() }),
  z.object({ type: z.literal("approval_resolved"), queue_item_id: z.string(), status: z.string() }),
  z.object({ type: z.literal("steering_applied"), id: z.string(), text: z.string() }),
]);

export type AgentEvent = z.infer<typeof agentEventSchema>;

export interface ToolCallRecord {
  call_id: string;
  name: string;
  arguments: unknown;
  status: ToolCallStatus;
  /** First line of what the tool answered (for reports). */
  summary: string;
  rule?: string;
  queue_item_id?: string;
}

export interface UnitResult {
  reply: string;
  rounds: number;
  calls: ToolCallRecord[];
  hitRoundLimit: boolean;
  provider: string | null;
  model: string | null;
  usage: TokenUsage;
  costUsd: number;
}

export interface AgentLoopDeps {
  router: Pick<LlmRouter, "stream">;
  tools: Pick<ToolRunner, "invoke">;
  /** The definitions sent from the first round (toolOffer.ts); loaded ones are added as the unit goes. */
  toolDefs: LanguageModelV4FunctionTool[];
  /** Every tool offered to this unit, schema sent or not: what load_tools and the index reach. */
  offered?: ReadonlyMap<string, ToolInfo>;
  textTools: TextToolSpec[];
  maxRounds: number;
  /** Given when ASSISTANT_AGENT_DEBUG=1. */
  debug?: AgentDebugLog;
}

export interface UnitInput {
  taskId: string;
  sessionId: string;
  taskType: string;
  prompt: LanguageModelV4Prompt;
  signal: AbortSignal;
  emit(event: AgentEvent): void;
  /** Undelivered steering messages, marked applied as they are taken. */
  takeSteering(): Array<{ id: string; text: string }>;
  /** The task waits for (true) or got (false) an operator decision. */
  onWaiting(waiting: boolean): void;
}

export const STEERING_PREFIX = "[Steering from the user, received while you were working]";

export async function runAgentUnit(deps: AgentLoopDeps, input: UnitInput): Promise<UnitResult> {
  const prompt: LanguageModelV4Prompt = [...input.prompt];
  const calls: ToolCallRecord[] = [];
  const usage: TokenUsage = { input: 0, output: 0 };
  let provider: string | null = null;
  let model: string | null = null;
  let textCallSeq = 0;
  let costUsd = 0;
  const tools: ToolsSent = { defs: [...deps.toolDefs], names: new Set(deps.toolDefs.map((d) => d.name)) };

  for (let round = 1; round <= deps.maxRounds; round++) {
    let text = "";
    const native: Array<{ id: string; name: string; input: string }> = [];
    const turn = deps.debug?.request(round, prompt, tools.defs.length);
    let turnUsage: TokenUsage = { input: 0, output: 0 };
    for await (const event of deps.router.stream({
      taskType: input.taskType,
      prompt,
      // A person waits for the first round of a turn; later rounds continue one already under way.
      priority: round === 1 ? "user" : "tool",
      ...(tools.defs.length > 0 ? { tools: [...tools.defs] } : {}),
      sessionId: input.sessionId,
      signal: input.signal,
    })) {
      if (event.type === "text" || event.type === "tool_call") turn?.chunk();
      if (event.type === "text") {
        text += event.delta;
        input.emit({ type: "token", delta: event.delta });
      } else if (event.type === "reset") {
        text = "";
        native.length = 0;
        input.emit({ type: "reset" });
      } else if (event.type === "tool_call") {
        native.push({ id: event.id, name: event.name, input: event.input });
      } else if (event.type === "route") {
        input.emit({ type: "route", provider: event.provider, model: event.model });
      } else if (event.type === "fallback") {
        input.emit({ type: "fallback", provider: event.provider, model: event.model, reason: event.reason });
      } else if (event.type === "finish") {
        provider = event.provider;
        model = event.model;
        usage.input += event.usage.input;
        usage.output += event.usage.output;
        costUsd += event.costUsd;
        turnUsage = event.usage;
      }
    }
    input.emit({ type: "turn", round, text, provider: provider ?? "", model: model ?? "" });
    const textCalls = native.length === 0 && deps.textTools.length > 0 ? parseTextToolCalls(text, deps.textTools) : [];
    const wantsTools = native.length > 0 || textCalls.length > 0;
    turn?.answered({
      provider,
      model,
      chars: text.length,
      toolCalls: native.length || textCalls.length,
      usage: turnUsage,
    });

    if (wantsTools && round === deps.maxRounds) {
      const note = `Stopped: the limit of ${deps.maxRounds} tool rounds (ASSISTANT_MAX_TOOL_ROUNDS) was reached before the work was finished.`;
      return {
        reply: text ? `${text}\n\n${note}` : note,
        rounds: round,
        calls,
        hitRoundLimit: true,
        provider,
        model,
        usage,
        costUsd,
      };
    }
    if (!wantsTools) {
      // Steering that arrived during this turn gets one more turn; otherwise the answer is final.
      // At the last round it stays queued and runs as the next work unit.
      const steering = round < deps.maxRounds ? input.takeSteering() : [];
      if (steering.length === 0)
        return { reply: text, rounds: round, calls, hitRoundLimit: false, provider, model, usage, costUsd };
      prompt.push({ role: "assistant", content: [{ type: "text", text }] });
      applySteering(input, prompt, steering);
      continue;
    }

    if (native.length > 0) {
      const results = [];
      for (const call of native) {
        const args = parseArguments(call.input);
        const output = await invoke(deps, tools, input, calls, call.id, call.name, args, round);
        results.push({ id: call.id, name: call.name, args, output });
      }
      prompt.push({
        role: "assistant",
        content: [
          ...(text ? [{ type: "text" as const, text }] : []),
          ...results.map((r) => ({
            type: "tool-call" as const,
            toolCallId: r.id,
            toolName: r.name,
            input: r.args.ok ? r.args.value : {},
          })),
        ],
      });
      prompt.push({
        role: "tool",
        content: results.map((r) => ({
          type: "tool-result" as const,
          toolCallId: r.id,
          toolName: r.name,
          output: { type: "text" as const, value: r.output },
        })),
      });
    } else {
      prompt.push({ role: "assistant", content: [{ type: "text", text }] });
      if (textCalls.length > 0) {
        const parts: string[] = [];
        for (const call of textCalls) {
          const id = `text-${++textCallSeq}`;
          if (!call.ok) {
            const output = `Malformed tool call ${JSON.stringify(call.line.trim().slice(0, 200))}: ${call.problem}. Nothing was run.`;
            input.emit({ type: "tool_call", id, name: "(malformed)", arguments: call.line.trim().slice(0, 200) });
            input.emit({ type: "tool_result", id, name: "(malformed)", status: "invalid_arguments", output });
            calls.push({
              call_id: id,
              name: "(malformed)",
              arguments: call.line,
              status: "invalid_arguments",
              summary: output,
            });
            parts.push(output);
            continue;
          }
          const output = await invoke(deps, tools, input, calls, id, call.name, { ok: true, value: call.input }, round);
          parts.push(`Result of TOOL: ${call.name}\n${output}`);
        }
        prompt.push({ role: "user", content: [{ type: "text", text: parts.join("\n\n") }] });
      }
    }
    // Steering sent while the tools ran (an approval wait included) reaches the very next LLM request.
    applySteering(input, prompt, input.takeSteering());
  }
  // maxRounds >= 1 always returns inside the loop; this is reached only with maxRounds 0.
  return { reply: "", rounds: 0, calls, hitRoundLimit: true, provider, model, usage, costUsd };
}

function applySteering(input: UnitInput, prompt: LanguageModelV4Prompt, steering: Array<{ id: string; text: string }>) {
  for (const message of steering) {
    input.emit({ type: "steering_applied", id: message.id, text: message.text });
    prompt.push({ role: "user", content: [{ type: "text", text: `${STEERING_PREFIX}\n${message.text}` }] });
  }
}

type ParsedArgs = { ok: true; value: unknown } | { ok: false; problem: string };

function parseArguments(raw: string): ParsedArgs {
  if (raw.trim() === "") return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(raw) as unknown };
  } catch {
    return { ok: false, problem: "the arguments are not valid JSON" };
  }
}

/** The tool definitions sent with the next request: the offer's, then what was loaded or called since. */
interface ToolsSent {
  defs: LanguageModelV4FunctionTool[];
  names: Set<string>;
}

function sendSchema(tools: ToolsSent, tool: ToolInfo): void {
  if (tools.names.has(tool.name)) return;
  tools.names.add(tool.name);
  tools.defs.push(toolDefinition(tool));
}

async function invoke(
  deps: AgentLoopDeps,
  tools: ToolsSent,
  input: UnitInput,
  calls: ToolCallRecord[],
  id: string,
  name: string,
  args: ParsedArgs,
  round: number,
): Promise<string> {
  input.emit({ type: "tool_call", id, name, arguments: args.ok ? args.value : null });
  if (name === LOAD_TOOLS && deps.offered) {
    // Answered here: it runs nothing, it only reads schemas of tools this unit already offers.
    const loaded = answerLoadTools(args.ok ? args.value : null, deps.offered);
    for (const tool of loaded.found) sendSchema(tools, tool);
    const status = loaded.found.length > 0 ? "ok" : "invalid_arguments";
    input.emit({ type: "tool_result", id, name, status, output: loaded.output });
    deps.debug?.tool(round, { tool: name, status, ms: 0 });
    return loaded.output;
  }
  // A tool from the index called without its schema: it runs if the arguments are right, and its schema is sent
  // from the next round on (and given in the answer when they were wrong, so the model can retry).
  const unseen = tools.names.has(name) ? undefined : deps.offered?.get(name);
  if (unseen) sendSchema(tools, unseen);
  if (!args.ok) {
    const output = withSchema(
      `Invalid arguments for ${name}: ${args.problem}. Call it again with a JSON object.`,
      unseen,
    );
    input.emit({ type: "tool_result", id, name, status: "invalid_arguments", output });
    calls.push({ call_id: id, name, arguments: null, status: "invalid_arguments", summary: output });
    deps.debug?.tool(round, { tool: name, status: "invalid_arguments", ms: 0 });
    return output;
  }
  const started = performance.now();
  const result = await deps.tools.invoke(name, args.value, {
    taskId: input.taskId,
    sessionId: input.sessionId,
    signal: input.signal,
    onApprovalRequested: (item) => {
      input.onWaiting(true);
      input.emit({ type: "approval_requested", queue_item_id: item.id, tool: item.tool, rule: item.rule });
    },
    onApprovalResolved: (item) => {
      input.onWaiting(false);
      input.emit({ type: "approval_resolved", queue_item_id: item.id, status: item.status });
    },
  });
  deps.debug?.tool(round, {
    tool: name,
    status: result.status,
    ...(result.rule ? { rule: result.rule } : {}),
    ms: performance.now() - started,
  });
  const output = result.status === "invalid_arguments" ? withSchema(result.output, unseen) : result.output;
  input.emit({
    type: "tool_result",
    id,
    name,
    status: result.status,
    output,
    ...(result.queue_item_id ? { queue_item_id: result.queue_item_id } : {}),
  });
  calls.push({
    call_id: result.call_id,
    name,
    arguments: args.value,
    status: result.status,
    summary: firstLine(result.output),
    ...(result.rule ? { rule: result.rule } : {}),
    ...(result.queue_item_id ? { queue_item_id: result.queue_item_id } : {}),
  });
  return output;
}

function withSchema(output: string, tool: ToolInfo | undefined): string {
  if (!tool) return output;
  return `${output}\nParameters of ${tool.name}: ${JSON.stringify(toolDefinition(tool).inputSchema)}`;
}

function firstLine(text: string): string {
  const lines = text.split("\n").filter((l) => l.trim() && !l.startsWith("<untrusted_data"));
  const line = lines[0] ?? "";
  return line.length > 200 ? `${line.slice(0, 200)}...` : line;
}
