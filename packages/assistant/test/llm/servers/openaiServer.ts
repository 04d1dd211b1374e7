import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";

// A scripted OpenAI chat-completions server on 127.0.0.1 (port 0) speaking the real wire protocol, for provider
// and router tests and benchmarks. It records every request and answers each chat request with the next
// scripted behaviour (reply, tool call, HTTP error, hang, cut or stalled stream).
//
// Routes:
//   POST  any path ending in /chat/completions: /v1/..., OpenRouter's /api/v1/..., Azure's
//         /openai/deployments/<deployment>/chat/completions?api-version=...; non-stream JSON or SSE
//         (`data: {...}\n\n` chunks, a usage chunk when stream_options.include_usage, then `data: [DONE]`)
//   GET   any path ending in /models: {object: "list", data: options.models}
//   POST  any path ending in /embeddings: a deterministic bag-of-words vector per input (texts sharing words are
//         similar), so memory search with vectors can be tested without an embedding model
//   GET   /props (llama-server; 404 unless options.props), GET /health (llama-server: {status: "ok"})
//
// The scripted core (queue, recording, stream writing) is shared with ollamaServer.ts.

/** What the server does with one request. */
export type Behaviour =
  /** Streams `text` in pieces (an array gives the pieces; a string is split into words). */
  | { kind: "reply"; text: string | string[]; chunkDelayMs?: number; usage?: { input: number; output: number } }
  /** One tool call; streamed as the name first, then the JSON arguments in several pieces. */
  | { kind: "tool_call"; name: string; arguments: string | Record<string, unknown>; id?: string }
  /** An HTTP error with an OpenAI (or Ollama) error body unless `body` is given. */
  | { kind: "status"; status: number; headers?: Record<string, string>; body?: unknown }
  /** Never answers, not even headers. */
  | { kind: "hang" }
  /** Sends `afterChunks` chunks of the reply, then destroys the socket. */
  | { kind: "cut"; afterChunks: number; text?: string | string[] }
  /** Sends `afterChunks` chunks of the reply, then stops sending while keeping the connection open. */
  | { kind: "stall"; afterChunks: number; text?: string | string[] };

/**
 * A queued behaviour. Without `path` it is taken by the next chat request; with `path` by the next request to
 * exactly that path (so a listing endpoint can fail too; there only status, hang, cut and stall mean anything).
 */
export type ScriptedBehaviour = Behaviour & { path?: string };

export interface RecordedRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  query: Record<string, string>;
  /** Lower-case names, as Node gives them. */
  headers: IncomingHttpHeaders;
  /** Parsed JSON, the raw text when not JSON, undefined when empty. */
  body: unknown;
}

export interface ScriptedServer {
  /** http://127.0.0.1:<port>, no trailing slash. */
  url: string;
  requests: RecordedRequest[];
  enqueue(...behaviours: ScriptedBehaviour[]): void;
  /** The behaviour for chat requests when the queue has none for them. */
  setDefault(behaviour: Behaviour): void;
  /** Closes the server and every open connection (hung and stalled ones included). */
  close(): Promise<void>;
}

export const DEFAULT_REPLY: Behaviour = { kind: "reply", text: "Hello from the test server" };
const CUT_TEXT = "one two three four five six seven eight";

/** Handles one recorded request; `take` returns the scripted behaviour for it (chat: queue or default). */
export type ScriptedHandler = (
  request: RecordedRequest,
  res: ServerResponse,
  take: (chat: boolean) => Behaviour | undefined,
) => Promise<void> | void;

export async function startScriptedServer(
  handler: ScriptedHandler,
  defaultBehaviour: Behaviour = DEFAULT_REPLY,
): Promise<ScriptedServer> {
  const requests: RecordedRequest[] = [];
  const queue: ScriptedBehaviour[] = [];
  let fallback = defaultBehaviour;

  const take = (path: string) => (chat: boolean) => {
    const index = queue.findIndex((b) => (b.path === undefined ? chat : b.path === path));
    if (index >= 0) return queue.splice(index, 1)[0];
    return chat ? fallback : undefined;
  };

  const server = createServer((req, res) => {
    void readRequest(req)
      .then((request) => {
        requests.push(request);
        return handler(request, res, take(request.path));
      })
      .catch((error: unknown) => {
        if (!res.headersSent) sendJson(res, 500, { error: { message: String(error) } });
      });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    enqueue: (...behaviours) => queue.push(...behaviours),
    setDefault: (behaviour) => {
      fallback = behaviour;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function readRequest(req: IncomingMessage): Promise<RecordedRequest> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  let body: unknown;
  if (text) {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  return {
    method: req.method ?? "GET",
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers: req.headers,
    body,
  };
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

/**
 * Applies a failure behaviour (status, hang, cut, stall) to a plain JSON endpoint; returns false for reply and
 * tool_call, which mean "answer normally". `errorBody` shapes the default error body per protocol.
 */
export function failPlain(
  res: ServerResponse,
  behaviour: Behaviour | undefined,
  errorBody: (status: number) => unknown,
): boolean {
  if (!behaviour) return false;
  switch (behaviour.kind) {
    case "status":
      sendJson(res, behaviour.status, behaviour.body ?? errorBody(behaviour.status), behaviour.headers);
      return true;
    case "hang":
      return true;
    case "cut":
      res.socket?.destroy();
      return true;
    case "stall":
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"partial":');
      return true;
    default:
      return false;
  }
}

/** A reply's pieces: the given array, or the words of the text with their leading spaces. */
export function splitText(text: string | string[]): string[] {
  return Array.isArray(text) ? text : (text.match(/\s*\S+/g) ?? [text]);
}

/** Tool arguments as the JSON text OpenAI streams. */
export function argumentsText(args: string | Record<string, unknown>): string {
  return typeof args === "string" ? args : JSON.stringify(args);
}

/** Deterministic prompt size for usage: one token per whitespace-separated word of the messages' text. */
export function promptWords(body: unknown): number {
  const messages = (body as { messages?: unknown[] } | undefined)?.messages ?? [];
  let words = 0;
  const count = (text: unknown) => {
    if (typeof text === "string") words += text.split(/\s+/).filter(Boolean).length;
  };
  for (const message of messages) {
    const content = (message as { content?: unknown }).content;
    if (Array.isArray(content)) for (const part of content) count((part as { text?: unknown }).text);
    else count(content);
  }
  return words;
}

/**
 * Writes stream frames one at a time. For cut and stall only the first `afterChunks` body frames go out, then
 * the socket is destroyed (cut) or left open and silent (stall); otherwise the tail frames follow and the
 * response ends. Stops early when the client went away.
 */
export async function writeFrames(
  res: ServerResponse,
  behaviour: Behaviour,
  frames: string[],
  tail: string[],
  delayMs = 0,
): Promise<void> {
  const limit = behaviour.kind === "cut" || behaviour.kind === "stall" ? behaviour.afterChunks : frames.length;
  for (const frame of frames.slice(0, limit)) {
    if (res.destroyed) return;
    res.write(frame);
    if (delayMs > 0) await sleep(delayMs);
  }
  if (behaviour.kind === "cut") {
    // Let the written frames reach the client before the connection drops.
    await sleep(20);
    res.socket?.destroy();
    return;
  }
  if (behaviour.kind === "stall") return;
  for (const frame of tail) res.write(frame);
  res.end();
}

/** The text a reply, cut or stall streams. */
export function replyText(behaviour: Behaviour): string | string[] {
  if (behaviour.kind === "reply") return behaviour.text;
  if (behaviour.kind === "cut" || behaviour.kind === "stall") return behaviour.text ?? CUT_TEXT;
  return "";
}

// ---- OpenAI protocol ------------------------------------------------------------------------------------------

export interface OpenAiServerOptions {
  /** GET .../models `data` entries, in whatever shape the test needs (OpenAI, OpenRouter or llama-server). */
  models?: Record<string, unknown>[];
  /** llama-server's GET /props answer; the route answers 404 without it. */
  props?: Record<string, unknown>;
  /** Behaviour for chat requests when the queue is empty (default DEFAULT_REPLY). */
  defaultBehaviour?: Behaviour;
  /** A model's thinking time: each chat reply waits a uniformly random [min, max] ms before its first byte. */
  latencyMs?: [min: number, max: number];
}

const openAiError = (status: number) => ({
  error: {
    message: `scripted HTTP ${status}`,
    type: status === 429 ? "rate_limit_exceeded" : status >= 500 ? "server_error" : "invalid_request_error",
    code: null,
  },
});

export function startOpenAiServer(options: OpenAiServerOptions = {}): Promise<ScriptedServer> {
  return startScriptedServer((request, res, take) => {
    if (request.method === "POST" && request.path.endsWith("/chat/completions")) {
      const behaviour = take(true) ?? DEFAULT_REPLY;
      if (!options.latencyMs) return chatCompletion(request, res, behaviour);
      const [min, max] = options.latencyMs;
      return sleep(min + Math.random() * (max - min)).then(() => chatCompletion(request, res, behaviour));
    }
    if (failPlain(res, take(false), openAiError)) return;
    if (request.method === "POST" && request.path.endsWith("/embeddings")) return embeddings(request, res);
    if (request.method === "GET" && request.path.endsWith("/models")) {
      return sendJson(res, 200, { object: "list", data: options.models ?? [] });
    }
    if (request.method === "GET" && request.path === "/props" && options.props) {
      return sendJson(res, 200, options.props);
    }
    if (request.method === "GET" && request.path === "/health") return sendJson(res, 200, { status: "ok" });
    sendJson(res, 404, { error: { message: `no route ${request.method} ${request.path}`, type: "not_found" } });
  }, options.defaultBehaviour);
}

export const EMBEDDING_DIMS = 64;

/** Each word adds 1 to a dimension picked by its hash; the vector is normalised. */
export function bagOfWordsVector(text: string): number[] {
  const vector = new Array<number>(EMBEDDING_DIMS).fill(0);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    let hash = 2166136261;
    for (const char of word) hash = Math.imul(hash ^ char.codePointAt(0)!, 16777619) >>> 0;
    vector[hash % EMBEDDING_DIMS]! += 1;
  }
  const norm = Math.hypot(...vector) || 1;
  return vector.map((x) => x / norm);
}

function embeddings(request: RecordedRequest, res: ServerResponse): void {
  const body = (request.body ?? {}) as { model?: string; input?: string | string[] };
  const inputs = typeof body.input === "string" ? [body.input] : (body.input ?? []);
  sendJson(res, 200, {
    object: "list",
    model: body.model ?? "embed-model",
    data: inputs.map((text, index) => ({ object: "embedding", index, embedding: bagOfWordsVector(text) })),
    usage: { prompt_tokens: inputs.length, total_tokens: inputs.length },
  });
}

async function chatCompletion(request: RecordedRequest, res: ServerResponse, behaviour: Behaviour): Promise<void> {
  const body = (request.body ?? {}) as {
    model?: string;
    stream?: boolean;
    stream_options?: { include_usage?: boolean };
  };
  const model = body.model ?? "test-model";
  const id = `chatcmpl-${Date.now()}`;
  const created = Math.floor(Date.now() / 1000);
  const base = { id, object: "chat.completion.chunk", created, model };

  if (behaviour.kind === "status") {
    return sendJson(res, behaviour.status, behaviour.body ?? openAiError(behaviour.status), behaviour.headers);
  }
  if (behaviour.kind === "hang") return;

  const pieces = splitText(replyText(behaviour));
  const input = behaviour.kind === "reply" && behaviour.usage ? behaviour.usage.input : promptWords(request.body);
  const output = behaviour.kind === "reply" && behaviour.usage ? behaviour.usage.output : pieces.length;
  const usage = { prompt_tokens: input, completion_tokens: output, total_tokens: input + output };

  if (!body.stream) {
    if (behaviour.kind === "cut" || behaviour.kind === "stall") {
      failPlain(res, behaviour, openAiError);
      return;
    }
    const message =
      behaviour.kind === "tool_call"
        ? {
            role: "assistant",
            content: null,
            tool_calls: [
              {
                id: behaviour.id ?? "call_1",
                type: "function",
                function: { name: behaviour.name, arguments: argumentsText(behaviour.arguments) },
              },
            ],
          }
        : { role: "assistant", content: pieces.join("") };
    const finish = behaviour.kind === "tool_call" ? "tool_calls" : "stop";
    return sendJson(res, 200, {
      id,
      object: "chat.completion",
      created,
      model,
      choices: [{ index: 0, message, finish_reason: finish }],
      usage,
    });
  }

  const sse = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;
  const choice = (delta: unknown, finish: string | null = null) =>
    sse({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });

  let frames: string[];
  let finish = "stop";
  if (behaviour.kind === "tool_call") {
    const args = argumentsText(behaviour.arguments);
    const third = Math.ceil(args.length / 3);
    const argPieces = [args.slice(0, third), args.slice(third, 2 * third), args.slice(2 * third)].filter(Boolean);
    frames = [
      choice({
        role: "assistant",
        tool_calls: [
          {
            index: 0,
            id: behaviour.id ?? "call_1",
            type: "function",
            function: { name: behaviour.name, arguments: "" },
          },
        ],
      }),
      ...argPieces.map((piece) => choice({ tool_calls: [{ index: 0, function: { arguments: piece } }] })),
    ];
    finish = "tool_calls";
  } else {
    frames = pieces.map((piece, i) => choice(i === 0 ? { role: "assistant", content: piece } : { content: piece }));
  }
  const tail = [
    choice({}, finish),
    ...(body.stream_options?.include_usage ? [sse({ ...base, choices: [], usage })] : []),
    "data: [DONE]\n\n",
  ];
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  res.flushHeaders();
  await writeFrames(res, behaviour, frames, tail, behaviour.kind === "reply" ? behaviour.chunkDelayMs : 0);
}
