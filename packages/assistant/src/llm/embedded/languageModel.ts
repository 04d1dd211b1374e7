import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4FinishReason,
  LanguageModelV4FunctionTool,
  LanguageModelV4GenerateResult,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
  LanguageModelV4ToolResultPart,
  LanguageModelV4Usage,
  SharedV4Warning,
} from "@ai-sdk/provider";
import type {
  ChatHistoryItem,
  ChatWrapper,
  GbnfJsonSchema,
  Llama,
  LlamaChat,
  LlamaChatResponseChunk,
  LlamaContextSequence,
  LlamaGrammar,
  LlamaModel,
} from "node-llama-cpp";
import * as z from "zod";
import { ProviderFailure } from "../errors.ts";

// The AI SDK LanguageModelV4 over node-llama-cpp. Each call borrows the runtime's single context sequence (the
// runtime serializes calls; a sequence reused across calls keeps the common prompt prefix evaluated), renders the
// V4 prompt as a node-llama-cpp chat history and streams what LlamaChat generates.
//
// Tool calls: small local models follow a JSON grammar far better than a chat template's function-calling
// syntax, so when tools are offered the reply is generated under a JSON-schema grammar:
// {"type":"tool_call","name":<tool>,"arguments":{...}} or {"type":"answer","text":"..."}. The tools are described
// in the system prompt, and the arguments are checked against the tool's input schema before a tool-call part is
// emitted. The answer's text is streamed as it is generated.

export const EMBEDDED_PROVIDER_ID = "assistant_embedded";

/** What one call borrows from the runtime; `release` hands the sequence to the next call. */
export interface EmbeddedLease {
  llama: Llama;
  model: LlamaModel;
  sequence: LlamaContextSequence;
  release(): void;
}

export interface EmbeddedBackend {
  readonly modelId: string;
  /** Waits for the model (loading it when needed) and for this call's turn; throws ProviderFailure. */
  acquire(signal?: AbortSignal): Promise<EmbeddedLease>;
}

/** providerOptions.assistant_embedded */
export interface EmbeddedProviderOptions {
  repeat_penalty?: number;
}

const DEFAULT_TEMPERATURE = 0.7; // greedy decoding makes small models loop
const MAX_ANSWER_CHARS = 16_000;

export function createEmbeddedLanguageModel(backend: EmbeddedBackend): LanguageModelV4 {
  const model: LanguageModelV4 = {
    specificationVersion: "v4",
    provider: EMBEDDED_PROVIDER_ID,
    modelId: backend.modelId,
    supportedUrls: {},
    doStream: (options) => stream(backend, options),
    doGenerate: async (options) => collect(await stream(backend, options)),
  };
  return model;
}

async function collect(result: LanguageModelV4StreamResult): Promise<LanguageModelV4GenerateResult> {
  const content: LanguageModelV4Content[] = [];
  let text = "";
  let reasoning = "";
  let warnings: SharedV4Warning[] = [];
  let finish: Extract<LanguageModelV4StreamPart, { type: "finish" }> | undefined;
  const reader = result.stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (value.type === "stream-start") warnings = value.warnings;
    else if (value.type === "text-delta") text += value.delta;
    else if (value.type === "reasoning-delta") reasoning += value.delta;
    else if (value.type === "tool-call") content.push(value);
    else if (value.type === "error") throw value.error;
    else if (value.type === "finish") finish = value;
  }
  if (!finish) throw new ProviderFailure("server", "the embedded model stopped without finishing");
  if (text) content.unshift({ type: "text", text });
  if (reasoning) content.unshift({ type: "reasoning", text: reasoning });
  return { content, finishReason: finish.finishReason, usage: finish.usage, warnings };
}

async function stream(
  backend: EmbeddedBackend,
  options: LanguageModelV4CallOptions,
): Promise<LanguageModelV4StreamResult> {
  const lease = await backend.acquire(options.abortSignal);
  let plan: Plan;
  try {
    plan = await planCall(lease, options);
  } catch (error) {
    lease.release();
    throw error instanceof ProviderFailure ? error : new ProviderFailure("refused", (error as Error).message);
  }
  const stop = new AbortController();
  const forwardAbort = () => stop.abort(options.abortSignal?.reason);
  options.abortSignal?.addEventListener("abort", forwardAbort, { once: true });
  if (options.abortSignal?.aborted) forwardAbort();
  return {
    stream: new ReadableStream<LanguageModelV4StreamPart>({
      start(controller) {
        void generate(lease, plan, stop.signal, controller).finally(() => {
          options.abortSignal?.removeEventListener("abort", forwardAbort);
          lease.release();
        });
      },
      cancel() {
        stop.abort(new Error("the stream was cancelled"));
      },
    }),
  };
}

// ---- planning: prompt, sampling, grammar ----------------------------------------------------------------

interface ToolMode {
  tools: LanguageModelV4FunctionTool[];
  grammar: LlamaGrammar;
  allowAnswer: boolean;
}

interface Plan {
  history: ChatHistoryItem[];
  warnings: SharedV4Warning[];
  maxTokens: number;
  temperature: number;
  topP: number | undefined;
  topK: number | undefined;
  seed: number | undefined;
  repeatPenalty: { penalty?: number; frequencyPenalty?: number; presencePenalty?: number } | undefined;
  stopSequences: string[];
  thoughtBudget: number | undefined;
  tools: ToolMode | undefined;
  json: LlamaGrammar | undefined;
}

async function planCall(lease: EmbeddedLease, options: LanguageModelV4CallOptions): Promise<Plan> {
  const warnings: SharedV4Warning[] = [];
  const functionTools = (options.tools ?? []).filter((t): t is LanguageModelV4FunctionTool => t.type === "function");
  if (functionTools.length < (options.tools?.length ?? 0)) {
    warnings.push({ type: "unsupported", feature: "provider-defined tools" });
  }
  const choice = options.toolChoice ?? { type: "auto" };
  const offered =
    choice.type === "none"
      ? []
      : choice.type === "tool"
        ? functionTools.filter((tool) => tool.name === choice.toolName)
        : functionTools;
  if (choice.type === "tool" && offered.length === 0) {
    throw new ProviderFailure("refused", `toolChoice names "${choice.toolName}", which is not among the tools`);
  }
  const maxTokens = Math.max(
    1,
    Math.min(options.maxOutputTokens ?? lease.sequence.contextSize, lease.sequence.contextSize),
  );
  let tools: ToolMode | undefined;
  let json: LlamaGrammar | undefined;
  if (offered.length > 0) {
    const allowAnswer = choice.type === "auto";
    const answerChars = Math.min(MAX_ANSWER_CHARS, Math.max(32, maxTokens * 3));
    const grammar = await grammarFor(lease.llama, replySchema(offered, allowAnswer, answerChars));
    tools = { tools: offered, grammar, allowAnswer };
  } else if (options.responseFormat?.type === "json") {
    json = options.responseFormat.schema
      ? await grammarFor(lease.llama, toGbnf(options.responseFormat.schema))
      : await lease.llama.getGrammarFor("json");
  }
  const penalties = {
    ...(options.frequencyPenalty !== undefined ? { frequencyPenalty: unit(options.frequencyPenalty) } : {}),
    ...(options.presencePenalty !== undefined ? { presencePenalty: unit(options.presencePenalty) } : {}),
  };
  const repeat = (options.providerOptions?.[EMBEDDED_PROVIDER_ID] as EmbeddedProviderOptions | undefined)
    ?.repeat_penalty;
  return {
    history: toChatHistory(options.prompt, tools ? toolInstructions(tools) : undefined),
    warnings,
    maxTokens,
    temperature: options.temperature ?? DEFAULT_TEMPERATURE,
    topP: options.topP,
    topK: options.topK,
    seed: options.seed,
    repeatPenalty:
      repeat !== undefined || Object.keys(penalties).length > 0
        ? { ...(typeof repeat === "number" ? { penalty: repeat } : {}), ...penalties }
        : undefined,
    stopSequences: options.stopSequences ?? [],
    // A JSON reply must start at once; a "none" reasoning request skips the thinking segment too.
    thoughtBudget: tools || json || options.reasoning === "none" ? 0 : undefined,
    tools,
    json,
  };
}

// createGrammarForJsonSchema infers a const type from a literal schema; ours are built at run time.
function grammarFor(llama: Llama, schema: GbnfJsonSchema): Promise<LlamaGrammar> {
  return llama.createGrammarForJsonSchema(schema as Parameters<Llama["createGrammarForJsonSchema"]>[0]);
}

/** llama.cpp takes frequency and presence penalties in [0, 1]; the AI SDK range is wider. */
function unit(value: number): number {
  return Math.min(1, Math.max(0, value));
}

/** The V4 prompt as a node-llama-cpp chat history, ending with the empty model turn to generate. */
export function toChatHistory(prompt: LanguageModelV4Prompt, extraSystem?: string): ChatHistoryItem[] {
  const history: ChatHistoryItem[] = [];
  const push = (type: "system" | "user", text: string) => {
    const last = history.at(-1);
    // Templates expect alternating turns: consecutive user or system texts become one message.
    if (last && last.type === type && typeof last.text === "string") last.text = `${last.text}\n\n${text}`;
    else history.push({ type, text });
  };
  for (const message of prompt) {
    switch (message.role) {
      case "system":
        push("system", message.content);
        break;
      case "user":
        push("user", message.content.map((part) => (part.type === "text" ? part.text : fileText(part))).join("\n"));
        break;
      case "assistant": {
        const response: string[] = [];
        for (const part of message.content) {
          if (part.type === "text") response.push(part.text);
          else if (part.type === "tool-call") {
            response.push(
              JSON.stringify({ type: "tool_call", name: part.toolName, arguments: parseInput(part.input) }),
            );
          } else if (part.type === "tool-result") push("user", toolResultText(part));
        }
        if (response.length > 0) history.push({ type: "model", response: [response.join("\n")] });
        break;
      }
      case "tool":
        for (const part of message.content) {
          if (part.type === "tool-result") push("user", toolResultText(part));
        }
        break;
    }
  }
  if (extraSystem) {
    const first = history[0];
    if (first?.type === "system" && typeof first.text === "string") first.text = `${first.text}\n\n${extraSystem}`;
    else history.unshift({ type: "system", text: extraSystem });
  }
  history.push({ type: "model", response: [] });
  return history;
}

function fileText(part: { data: { type: string; text?: string }; mediaType: string; filename?: string }): string {
  if (part.data.type === "text" && part.data.text !== undefined) return part.data.text;
  return `[attached ${part.filename ?? "file"} (${part.mediaType}): this model reads text only]`;
}

function parseInput(input: unknown): unknown {
  if (typeof input !== "string") return input;
  try {
    return JSON.parse(input);
  } catch {
    return input;
  }
}

function toolResultText(part: LanguageModelV4ToolResultPart): string {
  const output = part.output;
  const value =
    output.type === "text" || output.type === "error-text"
      ? output.value
      : output.type === "json" || output.type === "error-json"
        ? JSON.stringify(output.value)
        : output.type === "execution-denied"
          ? `execution denied${output.reason ? `: ${output.reason}` : ""}`
          : output.value.map((item) => (item.type === "text" ? item.text : `[${item.type}]`)).join("\n");
  const failed = output.type === "error-text" || output.type === "error-json" ? " (failed)" : "";
  return `Result of tool ${part.toolName}${failed}:\n${value}`;
}

function toolInstructions(mode: ToolMode): string {
  const lines = [
    "You can call tools. Reply with exactly one JSON object and nothing else:",
    '- to call a tool: {"type": "tool_call", "name": "<tool name>", "arguments": {<arguments>}}',
  ];
  if (mode.allowAnswer) lines.push('- to answer the user directly: {"type": "answer", "text": "<your answer>"}');
  lines.push("Tool results come back in the next user message. Tools:");
  for (const tool of mode.tools) {
    lines.push(`- ${tool.name}: ${tool.description ?? "(no description)"}`);
    lines.push(`  arguments JSON schema: ${JSON.stringify(tool.inputSchema)}`);
  }
  return lines.join("\n");
}

function replySchema(tools: LanguageModelV4FunctionTool[], allowAnswer: boolean, answerChars: number): GbnfJsonSchema {
  const calls: GbnfJsonSchema[] = tools.map((tool) => ({
    type: "object",
    properties: { type: { const: "tool_call" }, name: { const: tool.name }, arguments: toGbnf(tool.inputSchema) },
  }));
  const answer: GbnfJsonSchema = {
    type: "object",
    properties: { type: { const: "answer" }, text: { type: "string", maxLength: answerChars } },
  };
  const alternatives = allowAnswer ? [...calls, answer] : calls;
  return alternatives.length === 1 ? alternatives[0]! : { oneOf: alternatives };
}

const ANY_JSON: GbnfJsonSchema = {
  oneOf: [
    { type: ["string", "number", "boolean", "null"] },
    { type: "array" },
    { type: "object", additionalProperties: true },
  ],
};
const DATE_FORMATS = new Set(["date-time", "date", "time"]);

/**
 * A JSON Schema (draft 7, as the AI SDK passes tool schemas) in the subset node-llama-cpp's grammar supports.
 * The grammar writes every listed property, so an optional one may be null (and is dropped after parsing).
 * What the subset cannot express (patterns, numeric bounds) is left to the validation after generation.
 */
export function toGbnf(schema: unknown, depth = 0): GbnfJsonSchema {
  if (depth > 16 || schema === null || typeof schema !== "object") return ANY_JSON;
  const s = schema as Record<string, unknown>;
  const description = typeof s.description === "string" ? { description: s.description } : {};
  if (isPrimitive(s.const)) return { const: s.const, ...description };
  if (Array.isArray(s.enum) && s.enum.length > 0 && s.enum.every(isPrimitive)) return { enum: s.enum, ...description };
  const alternatives = Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : undefined;
  if (alternatives) return { oneOf: alternatives.map((a) => toGbnf(a, depth + 1)), ...description };
  if (Array.isArray(s.type)) return { oneOf: s.type.map((type) => toGbnf({ ...s, type }, depth + 1)) };
  const type = s.type ?? (s.properties ? "object" : undefined);
  switch (type) {
    case "string":
      if (typeof s.format === "string" && DATE_FORMATS.has(s.format)) {
        return { type: "string", format: s.format as "date-time" | "date" | "time", ...description };
      }
      return {
        type: "string",
        ...(typeof s.minLength === "number" ? { minLength: s.minLength } : {}),
        ...(typeof s.maxLength === "number" ? { maxLength: s.maxLength } : {}),
        ...description,
      };
    case "number":
    case "integer":
    case "boolean":
    case "null":
      return { type: type as "number" | "integer" | "boolean" | "null", ...description };
    case "array": {
      const array: { type: "array"; items?: GbnfJsonSchema; minItems?: number; maxItems?: number } = { type: "array" };
      if (s.items && typeof s.items === "object" && !Array.isArray(s.items)) array.items = toGbnf(s.items, depth + 1);
      if (typeof s.minItems === "number") array.minItems = s.minItems;
      if (typeof s.maxItems === "number") array.maxItems = s.maxItems;
      return { ...array, ...description };
    }
    case "object": {
      const properties = (s.properties ?? {}) as Record<string, unknown>;
      const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
      const keys = Object.keys(properties);
      if (keys.length === 0) {
        const extra = s.additionalProperties;
        return {
          type: "object",
          additionalProperties: extra && typeof extra === "object" ? toGbnf(extra, depth + 1) : extra !== false,
          ...description,
        };
      }
      return {
        type: "object",
        properties: Object.fromEntries(
          keys.map((key) => {
            const value = toGbnf(properties[key], depth + 1);
            return [key, required.has(key) ? value : { oneOf: [value, { type: "null" }] }];
          }),
        ),
        ...description,
      };
    }
    default:
      return ANY_JSON;
  }
}

function isPrimitive(value: unknown): value is string | number | boolean | null {
  return value === null || ["string", "number", "boolean"].includes(typeof value);
}

/** Drops the nulls the grammar wrote for optional properties the model chose not to set. */
function dropOptionalNulls(value: unknown, schema: unknown): unknown {
  if (!value || typeof value !== "object" || Array.isArray(value) || !schema || typeof schema !== "object") {
    return value;
  }
  const s = schema as { properties?: Record<string, unknown>; required?: string[] };
  if (!s.properties) return value;
  const required = new Set(s.required ?? []);
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (item === null && !required.has(key)) continue;
    out[key] = dropOptionalNulls(item, s.properties[key]);
  }
  return out;
}

/** Checks tool arguments against the tool's JSON schema; returns a reason when they do not fit. */
export function checkArguments(tool: LanguageModelV4FunctionTool, args: unknown): string | undefined {
  let validator: z.ZodType;
  try {
    validator = z.fromJSONSchema(tool.inputSchema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch {
    return checkRequired(tool.inputSchema, args);
  }
  const result = validator.safeParse(args);
  if (result.success) return undefined;
  const issue = result.error.issues[0];
  return issue ? `${issue.path.join(".") || "arguments"}: ${issue.message}` : "invalid arguments";
}

/** Fallback for schemas zod cannot read: the required keys must be there. */
function checkRequired(schema: unknown, args: unknown): string | undefined {
  if (!args || typeof args !== "object" || Array.isArray(args)) return "arguments: expected an object";
  const required = (schema as { required?: unknown }).required;
  const missing = Array.isArray(required) ? required.filter((key) => !(key in args)) : [];
  return missing.length > 0 ? `missing required argument(s): ${missing.join(", ")}` : undefined;
}

// ---- generation ----------------------------------------------------------------------------------------

type Controller = ReadableStreamDefaultController<LanguageModelV4StreamPart>;

// The chat wrapper is resolved from the GGUF's template once per loaded model.
const wrappers = new WeakMap<LlamaModel, ChatWrapper>();

async function generate(lease: EmbeddedLease, plan: Plan, signal: AbortSignal, controller: Controller): Promise<void> {
  const parts = new DeferredParts(controller);
  const emit = (part: LanguageModelV4StreamPart) => parts.push(part);
  const close = () => parts.close();
  emit({ type: "stream-start", warnings: plan.warnings });
  const text = new Segment(emit, "text", "txt");
  const reasoning = new Segment(emit, "reasoning", "rsn");
  const answer = plan.tools?.allowAnswer ? new AnswerText() : undefined;
  let raw = "";
  let reasoningTokens = 0;
  const onResponseChunk = (chunk: LlamaChatResponseChunk) => {
    if (chunk.type === "segment") {
      if (chunk.segmentType === "thought") {
        reasoningTokens += chunk.tokens.length;
        reasoning.delta(chunk.text);
        if (chunk.segmentEndTime) reasoning.end();
      }
      return;
    }
    reasoning.end();
    if (!plan.tools) text.delta(chunk.text);
    else {
      raw += chunk.text;
      if (answer) text.delta(answer.push(chunk.text));
    }
  };

  let chat: LlamaChat | undefined;
  try {
    const lib = await import("node-llama-cpp");
    chat = new lib.LlamaChat({ contextSequence: lease.sequence, chatWrapper: wrappers.get(lease.model) ?? "auto" });
    wrappers.set(lease.model, chat.chatWrapper);
    const meter = lease.sequence.tokenMeter;
    const before = { input: meter.usedInputTokens, output: meter.usedOutputTokens };
    const response = await chat.generateResponse(plan.history, {
      onResponseChunk,
      signal,
      stopOnAbortSignal: true,
      maxTokens: plan.maxTokens,
      temperature: plan.temperature,
      ...(plan.topP !== undefined ? { topP: plan.topP } : {}),
      ...(plan.topK !== undefined ? { topK: plan.topK } : {}),
      ...(plan.seed !== undefined ? { seed: plan.seed } : {}),
      ...(plan.repeatPenalty ? { repeatPenalty: plan.repeatPenalty } : {}),
      ...(plan.stopSequences.length > 0 ? { customStopTriggers: plan.stopSequences } : {}),
      ...(plan.thoughtBudget !== undefined ? { budgets: { thoughtTokens: plan.thoughtBudget } } : {}),
      ...(plan.tools ? { grammar: plan.tools.grammar } : plan.json ? { grammar: plan.json } : {}),
    });
    if (signal.aborted) {
      parts.error(signal.reason);
      return;
    }
    reasoning.end();
    let finishReason = finishReasonOf(response.metadata.stopReason);
    if (plan.tools) {
      const reply = readReply(raw, plan.tools, finishReason.unified === "length");
      if (reply.type === "tool_call") {
        emit({
          type: "tool-call",
          toolCallId: `call_${crypto.randomUUID()}`,
          toolName: reply.name,
          input: reply.input,
        });
        finishReason = { unified: "tool-calls", raw: "tool_call" };
      } else if (answer) {
        text.delta(reply.text.slice(answer.emitted.length));
      }
    }
    text.end();
    // Counted after generating: only the final usage needs it, and before it would delay the first token.
    const promptTokens = chat.chatWrapper
      .generateContextState({ chatHistory: plan.history })
      .contextText.tokenize(lease.model.tokenizer).length;
    emit({
      type: "finish",
      finishReason,
      usage: usage(
        promptTokens,
        meter.usedInputTokens - before.input,
        meter.usedOutputTokens - before.output,
        reasoningTokens,
      ),
    });
    close();
  } catch (error) {
    if (signal.aborted) parts.error(signal.reason);
    else {
      emit({ type: "error", error: generationFailure(error, lease.sequence.contextSize) });
      close();
    }
  } finally {
    chat?.dispose({ disposeSequence: false });
  }
}

function generationFailure(error: unknown, contextSize: number): ProviderFailure {
  if (error instanceof ProviderFailure) return error;
  const message = (error as Error).message;
  // node-llama-cpp drops old turns to make room; when even that is not enough, the request itself is too big.
  if (/context shift/i.test(message)) {
    return new ProviderFailure(
      "refused",
      `the prompt does not fit the embedded model's context of ${contextSize} tokens (ASSISTANT_EMBEDDED_CONTEXT)`,
    );
  }
  return new ProviderFailure("server", `embedded model: ${message}`);
}

type Reply = { type: "tool_call"; name: string; input: string } | { type: "answer"; text: string };

function readReply(raw: string, mode: ToolMode, cut: boolean): Reply {
  let value: { type?: unknown; name?: unknown; arguments?: unknown; text?: unknown };
  try {
    value = JSON.parse(raw) as typeof value;
  } catch {
    const partial = new AnswerText();
    partial.push(raw);
    if (mode.allowAnswer && partial.started) return { type: "answer", text: partial.emitted };
    throw new ProviderFailure(
      "server",
      cut
        ? "the embedded model's tool call was cut by the output token limit"
        : "the embedded model's reply is not valid JSON",
    );
  }
  if (value.type === "answer" && typeof value.text === "string") return { type: "answer", text: value.text };
  const tool = mode.tools.find((t) => t.name === value.name);
  if (value.type !== "tool_call" || !tool) {
    throw new ProviderFailure("server", "the embedded model's reply names no offered tool");
  }
  const args = dropOptionalNulls(value.arguments ?? {}, tool.inputSchema);
  const problem = checkArguments(tool, args);
  if (problem) {
    throw new ProviderFailure("server", `the embedded model's arguments for tool ${tool.name} are invalid: ${problem}`);
  }
  return { type: "tool_call", name: tool.name, input: JSON.stringify(args) };
}

/**
 * The stream's parts, handed to the consumer after llama.cpp has been given the next token to compute: a fast
 * model makes a token every half millisecond, and the daemon's work per part (router, agent loop, task stream)
 * then runs beside the computation instead of between two tokens. Deltas that wait together become one.
 */
class DeferredParts {
  private readonly controller: Controller;
  private queue: LanguageModelV4StreamPart[] = [];
  private scheduled = false;

  constructor(controller: Controller) {
    this.controller = controller;
  }

  push(part: LanguageModelV4StreamPart): void {
    const last = this.queue.at(-1);
    if (
      last &&
      (part.type === "text-delta" || part.type === "reasoning-delta") &&
      last.type === part.type &&
      last.id === part.id
    ) {
      last.delta += part.delta;
      return;
    }
    this.queue.push(part);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  close(): void {
    this.flush();
    try {
      this.controller.close();
    } catch {}
  }

  error(reason: unknown): void {
    this.queue = [];
    this.controller.error(reason);
  }

  private flush(): void {
    this.scheduled = false;
    const parts = this.queue;
    this.queue = [];
    // After the consumer cancels, the controller refuses parts; generation is being stopped through the signal.
    for (const part of parts) {
      try {
        this.controller.enqueue(part);
      } catch {}
    }
  }
}

/** One text or reasoning block of the stream: start on the first delta, end once. */
class Segment {
  private readonly emit: (part: LanguageModelV4StreamPart) => void;
  private readonly kind: "text" | "reasoning";
  private readonly prefix: string;
  private count = 0;
  private open = false;

  constructor(emit: (part: LanguageModelV4StreamPart) => void, kind: "text" | "reasoning", prefix: string) {
    this.emit = emit;
    this.kind = kind;
    this.prefix = prefix;
  }

  private get id(): string {
    return `${this.prefix}-${this.count}`;
  }

  delta(delta: string): void {
    if (!delta) return;
    if (!this.open) {
      this.count++;
      this.open = true;
      this.emit({ type: `${this.kind}-start`, id: this.id });
    }
    this.emit({ type: `${this.kind}-delta`, id: this.id, delta });
  }

  end(): void {
    if (!this.open) return;
    this.open = false;
    this.emit({ type: `${this.kind}-end`, id: this.id });
  }
}

const ANSWER_PREFIX = /^\s*\{\s*"type"\s*:\s*"answer"\s*,\s*"text"\s*:\s*"/;
const ESCAPES: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };

/**
 * Decodes the "text" string of a {"type":"answer","text":"..."} reply while it is generated, so the answer
 * streams; holds back an escape sequence until it is complete.
 */
export class AnswerText {
  private raw = "";
  private cursor = -1;
  private closed = false;
  emitted = "";

  get started(): boolean {
    return this.cursor >= 0;
  }

  /** Adds generated text; returns the newly decoded part of the answer. */
  push(chunk: string): string {
    this.raw += chunk;
    if (this.cursor < 0) {
      const match = ANSWER_PREFIX.exec(this.raw);
      if (!match) return "";
      this.cursor = match[0].length;
    }
    let out = "";
    while (!this.closed && this.cursor < this.raw.length) {
      const ch = this.raw[this.cursor]!;
      if (ch === '"') {
        this.closed = true;
        break;
      }
      if (ch !== "\\") {
        out += ch;
        this.cursor++;
        continue;
      }
      const next = this.raw[this.cursor + 1];
      if (next === undefined) break;
      if (next !== "u") {
        out += ESCAPES[next] ?? next;
        this.cursor += 2;
        continue;
      }
      const unit = this.unicodeAt(this.cursor);
      if (unit === undefined) break;
      // A high surrogate waits for its low half, so a delta never ends inside a character.
      if (unit >= 0xd800 && unit <= 0xdbff) {
        const low = this.raw[this.cursor + 6] === "\\" ? this.unicodeAt(this.cursor + 6) : undefined;
        if (low === undefined) {
          if (this.raw.length < this.cursor + 12) break;
          out += String.fromCharCode(unit);
          this.cursor += 6;
          continue;
        }
        out += String.fromCharCode(unit, low);
        this.cursor += 12;
        continue;
      }
      out += String.fromCharCode(unit);
      this.cursor += 6;
    }
    this.emitted += out;
    return out;
  }

  private unicodeAt(at: number): number | undefined {
    const hex = this.raw.slice(at + 2, at + 6);
    return /^[0-9a-fA-F]{4}$/.test(hex) ? Number.parseInt(hex, 16) : undefined;
  }
}

function finishReasonOf(stopReason: string): LanguageModelV4FinishReason {
  switch (stopReason) {
    case "maxTokens":
      return { unified: "length", raw: stopReason };
    case "abort":
      return { unified: "other", raw: stopReason };
    default:
      return { unified: "stop", raw: stopReason };
  }
}

function usage(prompt: number, evaluated: number, output: number, reasoning: number): LanguageModelV4Usage {
  const noCache = Math.min(prompt, Math.max(0, evaluated));
  return {
    inputTokens: { total: prompt, noCache, cacheRead: prompt - noCache, cacheWrite: undefined },
    outputTokens: { total: output, text: output - reasoning, reasoning },
  };
}
