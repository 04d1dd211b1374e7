import type { ServerResponse } from "node:http";
import {
  type Behaviour,
  DEFAULT_REPLY,
  failPlain,
  promptWords,
  type RecordedRequest,
  replyText,
  type ScriptedServer,
  sendJson,
  splitText,
  startScriptedServer,
  writeFrames,
} from "./openaiServer.ts";

// A scripted Ollama server (native API) on 127.0.0.1 (port 0), with the same behaviours and request recording
// as openaiServer.ts.
//
// Routes:
//   POST /api/chat     NDJSON stream (Ollama streams unless `stream: false`): one line per piece with
//                      message.content, then `done: true` with done_reason, prompt_eval_count and eval_count;
//                      tool calls arrive whole in message.tool_calls (arguments as an object)
//   GET  /api/tags     the configured models
//   POST /api/show     details, model_info (<arch>.context_length) and capabilities; 404 for unknown models
//   GET  /api/version  {version}

export interface OllamaModelSpec {
  name: string;
  family?: string;
  parameter_size?: string;
  quantization_level?: string;
  context_length?: number;
  capabilities?: string[];
  /** RFC 3339; default a fixed date. */
  modified_at?: string;
  /** model_info's general.architecture (default: the family, else "llama"). */
  architecture?: string;
}

export interface OllamaServerOptions {
  models?: OllamaModelSpec[];
  /** GET /api/version (default "0.12.0"). */
  version?: string;
  /** Behaviour for chat requests when the queue is empty (default DEFAULT_REPLY). */
  defaultBehaviour?: Behaviour;
}

const FIXED_DATE = "2025-01-02T03:04:05.000Z";
const ollamaError = (status: number) => ({ error: `scripted HTTP ${status}` });

export function startOllamaServer(options: OllamaServerOptions = {}): Promise<ScriptedServer> {
  const models = options.models ?? [];
  return startScriptedServer((request, res, take) => {
    if (request.method === "POST" && request.path === "/api/chat")
      return chat(request, res, take(true) ?? DEFAULT_REPLY);
    if (failPlain(res, take(false), ollamaError)) return;
    if (request.method === "GET" && request.path === "/api/tags") {
      return sendJson(res, 200, { models: models.map(tag) });
    }
    if (request.method === "POST" && request.path === "/api/show") {
      const name = (request.body as { model?: string; name?: string } | undefined)?.model;
      const model = models.find((m) => m.name === name);
      if (!model) return sendJson(res, 404, { error: `model '${name}' not found` });
      return sendJson(res, 200, show(model));
    }
    if (request.method === "GET" && request.path === "/api/version") {
      return sendJson(res, 200, { version: options.version ?? "0.12.0" });
    }
    sendJson(res, 404, { error: "404 page not found" });
  }, options.defaultBehaviour);
}

function tag(model: OllamaModelSpec) {
  return {
    name: model.name,
    model: model.name,
    modified_at: model.modified_at ?? FIXED_DATE,
    size: 1_000_000,
    digest: "0".repeat(64),
    details: {
      parent_model: "",
      format: "gguf",
      family: model.family ?? "llama",
      families: [model.family ?? "llama"],
      parameter_size: model.parameter_size ?? "1B",
      quantization_level: model.quantization_level ?? "Q4_K_M",
    },
  };
}

function show(model: OllamaModelSpec) {
  const architecture = model.architecture ?? model.family ?? "llama";
  return {
    license: "",
    modelfile: `FROM ${model.name}`,
    parameters: "",
    template: "{{ .Prompt }}",
    details: tag(model).details,
    model_info: {
      "general.architecture": architecture,
      "general.parameter_count": 1_000_000_000,
      ...(model.context_length === undefined ? {} : { [`${architecture}.context_length`]: model.context_length }),
    },
    capabilities: model.capabilities ?? ["completion"],
    modified_at: model.modified_at ?? FIXED_DATE,
  };
}

async function chat(request: RecordedRequest, res: ServerResponse, behaviour: Behaviour): Promise<void> {
  const body = (request.body ?? {}) as { model?: string; stream?: boolean };
  const model = body.model ?? "test-model";
  const line = (message: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    `${JSON.stringify({ model, created_at: new Date().toISOString(), message: { role: "assistant", ...message }, ...extra })}\n`;

  if (behaviour.kind === "status") {
    return sendJson(res, behaviour.status, behaviour.body ?? ollamaError(behaviour.status), behaviour.headers);
  }
  if (behaviour.kind === "hang") return;

  const pieces = splitText(replyText(behaviour));
  const input = behaviour.kind === "reply" && behaviour.usage ? behaviour.usage.input : promptWords(request.body);
  const output = behaviour.kind === "reply" && behaviour.usage ? behaviour.usage.output : pieces.length;
  const toolCalls =
    behaviour.kind === "tool_call"
      ? [
          {
            function: {
              name: behaviour.name,
              arguments:
                typeof behaviour.arguments === "string" ? JSON.parse(behaviour.arguments) : behaviour.arguments,
            },
          },
        ]
      : undefined;
  const done = {
    done: true,
    done_reason: "stop",
    total_duration: 1_000_000,
    load_duration: 1_000,
    prompt_eval_count: input,
    prompt_eval_duration: 1_000,
    eval_count: output,
    eval_duration: 1_000,
  };

  if (body.stream === false) {
    if (behaviour.kind === "cut" || behaviour.kind === "stall") {
      failPlain(res, behaviour, ollamaError);
      return;
    }
    const message = toolCalls ? { content: "", tool_calls: toolCalls } : { content: pieces.join("") };
    return sendJson(res, 200, JSON.parse(line(message, done)));
  }

  const frames = toolCalls
    ? [line({ content: "", tool_calls: toolCalls }, { done: false })]
    : pieces.map((piece) => line({ content: piece }, { done: false }));
  res.writeHead(200, { "content-type": "application/x-ndjson" });
  res.flushHeaders();
  await writeFrames(
    res,
    behaviour,
    frames,
    [line({ content: "" }, done)],
    behaviour.kind === "reply" ? behaviour.chunkDelayMs : 0,
  );
}
