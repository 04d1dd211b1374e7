import type { LanguageModelV4, LanguageModelV4CallOptions } from "@ai-sdk/provider";
import type { ModelOptions, ProviderName, RouteConfig, RouteProvider } from "../../config/schemas/llmRouter.ts";
import { AppError } from "../../util/errors.ts";
import { resolveApiKeyRef } from "../../vault/apiKeyRef.ts";
import { ProviderFailure } from "../errors.ts";
import type { ModelInfo, ProviderContext } from "../types.ts";
import { httpFetch } from "./httpFetch.ts";

// Helpers shared by the HTTP providers: base URLs, API keys, route config -> AI SDK call options, request
// rewriting for fields the AI SDK providers drop, and the JSON requests behind `listModels`.

type CallOptions = Partial<LanguageModelV4CallOptions>;
type Fetch = typeof globalThis.fetch;

/**
 * An OpenAI-style base URL always ending in /v1: users give either what an OpenAI client takes (`.../v1`) or
 * the bare server URL.
 */
export function openAiBaseUrl(value: string): string {
  const trimmed = value.replace(/\/+$/, "");
  return trimmed.endsWith("/v1") ? trimmed : `${trimmed}/v1`;
}

/** A server's root URL from a configured value that may carry Ollama's /api or an OpenAI-style /v1 suffix. */
export function serverRoot(value: string): string {
  return value.replace(/\/+$/, "").replace(/\/(api|v1)$/, "");
}

const REASONING_LEVELS = ["none", "minimal", "low", "medium", "high", "xhigh", "max"] as const;
export type ReasoningLevel = (typeof REASONING_LEVELS)[number];

/** `thinking_level` as an AI SDK reasoning level; other strings are ignored rather than refused. */
export function reasoningLevel(level: string | undefined): ReasoningLevel | undefined {
  return REASONING_LEVELS.find((known) => known === level);
}

/** Drops undefined entries so merging call options never overwrites a value with undefined. */
export function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * Route config settings every OpenAI-style API takes. `top_k` and the llama.cpp/Ollama extras are added by the
 * providers that accept them.
 */
export function commonCallOptions(config: RouteConfig | undefined): CallOptions {
  if (!config) return {};
  return definedOnly({
    temperature: config.temperature,
    topP: config.top_p,
    frequencyPenalty: config.frequency_penalty,
    presencePenalty: config.presence_penalty,
    maxOutputTokens: config.max_tokens,
    reasoning: reasoningLevel(config.thinking_level),
  });
}

/**
 * The provider's API key: its `api_key_ref`, else the environment variable `envName`; undefined when neither
 * is set. A ref that does not resolve makes the provider unavailable (the message names the ref, not a value).
 */
export function providerKey(context: ProviderContext, provider: ProviderName, envName?: string): string | undefined {
  const ref = context.config.providers[provider]?.api_key_ref;
  try {
    if (ref) return resolveApiKeyRef(ref, context);
    // Through resolveApiKeyRef so the value is registered for redaction like any other key.
    if (envName && context.env[envName]) return resolveApiKeyRef(envName, context);
  } catch (error) {
    if (error instanceof AppError) throw new ProviderFailure("unavailable", `${provider}: ${error.message}`);
    throw error;
  }
  return undefined;
}

/** Like `providerKey`, but a missing key makes the provider unavailable with `howToSet` in the message. */
export function requireKey(
  context: ProviderContext,
  provider: ProviderName,
  envName: string | undefined,
  howToSet: string,
): string {
  const key = providerKey(context, provider, envName);
  if (key === undefined) throw new ProviderFailure("unavailable", `${provider} has no API key: ${howToSet}`);
  return key;
}

/**
 * What a `RequestRewrite` may change: the headers and the JSON body of one outgoing request. The body is parsed
 * (and the request re-serialised) only when the rewrite reads it: a rewrite with nothing to change costs nothing.
 */
export interface OutgoingRequest {
  headers: Headers;
  readonly body: Record<string, unknown>;
}
export type RequestRewrite = (request: OutgoingRequest, options: LanguageModelV4CallOptions) => void;

/**
 * Wraps a model so each call can edit the request it sends. The AI SDK providers validate their options and
 * drop what they do not know (llama.cpp's `top_k`, Ollama's `num_gpu`), so the model is built per call with a
 * fetch that applies `rewrite` with that call's options. Requests go through `httpFetch` (plain http:// model
 * servers over node:http; anything else through global fetch).
 */
export function withRequestRewrite(
  create: (fetch: Fetch) => LanguageModelV4,
  rewrite: RequestRewrite,
): LanguageModelV4 {
  const forCall = (options: LanguageModelV4CallOptions): LanguageModelV4 =>
    create((input, init) => {
      if (typeof init?.body !== "string") return httpFetch(input, init);
      const text = init.body;
      let body: Record<string, unknown> | undefined;
      const request: OutgoingRequest = {
        headers: new Headers(init.headers),
        get body() {
          body ??= JSON.parse(text) as Record<string, unknown>;
          return body;
        },
      };
      rewrite(request, options);
      return httpFetch(input, { ...init, headers: request.headers, body: body ? JSON.stringify(body) : text });
    });
  const model = create(httpFetch);
  return {
    specificationVersion: "v4",
    provider: model.provider,
    modelId: model.modelId,
    supportedUrls: model.supportedUrls,
    doGenerate: (options) => forCall(options).doGenerate(options),
    doStream: (options) => forCall(options).doStream(options),
  };
}

export interface JsonRequest {
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: unknown;
  signal?: AbortSignal | undefined;
}

/**
 * One JSON request of a model listing. Failures become a ProviderFailure naming the provider and the URL
 * (keys travel in headers only, so neither the URL nor the message carries one); a caller's abort passes through.
 */
export async function requestJson(provider: RouteProvider, url: string, request: JsonRequest = {}): Promise<unknown> {
  const method = request.method ?? "GET";
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers: {
        accept: "application/json",
        ...(request.body === undefined ? {} : { "content-type": "application/json" }),
        ...request.headers,
      },
      ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
      signal: request.signal ?? null,
    });
  } catch (error) {
    if (request.signal?.aborted) throw error;
    throw new ProviderFailure("unavailable", `${provider}: cannot reach ${url} (${networkCause(error)})`);
  }
  if (!response.ok) {
    const detail = await errorDetail(response);
    const message = `${provider}: ${method} ${url} answered HTTP ${response.status}${detail ? `: ${detail}` : ""}`;
    const kind = response.status === 429 ? "rate_limited" : response.status >= 500 ? "server" : "refused";
    throw new ProviderFailure(kind, message, { status: response.status });
  }
  try {
    return await response.json();
  } catch {
    throw new ProviderFailure("server", `${provider}: ${method} ${url} did not answer JSON`);
  }
}

/** Why a request got no HTTP answer, short: the system's code (ECONNREFUSED, ENOTFOUND...) when there is one. */
export function networkCause(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (typeof cause?.code === "string") return cause.code;
  if (typeof cause?.message === "string") return cause.message;
  return error instanceof Error ? error.message : String(error);
}

/** The server's own error text (OpenAI `{error: {message}}`, Ollama `{error}`), short; never the request. */
async function errorDetail(response: Response): Promise<string> {
  const text = await response.text().catch(() => "");
  let detail = text;
  try {
    const parsed = JSON.parse(text) as { error?: unknown };
    const error = parsed.error as { message?: unknown } | string | undefined;
    detail = typeof error === "string" ? error : typeof error?.message === "string" ? error.message : "";
  } catch {
    // not JSON: keep the text
  }
  return detail.replace(/\s+/g, " ").trim().slice(0, 200);
}

export function asRecord(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** `created` (Unix seconds, as OpenAI-style model lists give it) as RFC 3339. */
export function createdAt(created: unknown): string | undefined {
  return typeof created === "number" && Number.isFinite(created) ? new Date(created * 1000).toISOString() : undefined;
}

/** GET {base}/models of an OpenAI-style API as ModelInfo; `extra` adds provider-specific metadata per entry. */
export async function listOpenAiModels(
  provider: RouteProvider,
  baseUrl: string,
  headers: Record<string, string>,
  signal: AbortSignal | undefined,
  extra: (entry: Record<string, unknown>) => ModelOptions = () => ({}),
): Promise<ModelInfo[]> {
  const body = asRecord(await requestJson(provider, `${baseUrl}/models`, { headers, signal }));
  return asArray(body.data).flatMap((item) => {
    const entry = asRecord(item);
    if (typeof entry.id !== "string") return [];
    const options: ModelOptions = definedOnly({ modified_at: createdAt(entry.created), ...extra(entry) });
    return [{ provider, model: entry.id, options }];
  });
}

/** POST {base}/embeddings of an OpenAI-style API: one vector per input, in input order. */
export async function openAiEmbeddings(
  provider: RouteProvider,
  baseUrl: string,
  headers: Record<string, string>,
  model: string,
  texts: readonly string[],
  signal: AbortSignal | undefined,
): Promise<number[][]> {
  const body = asRecord(
    await requestJson(provider, `${baseUrl}/embeddings`, {
      method: "POST",
      headers,
      body: { model, input: texts },
      signal,
    }),
  );
  const rows = asArray(body.data)
    .map(asRecord)
    .sort((a, b) => Number(a.index ?? 0) - Number(b.index ?? 0));
  return checkVectors(
    provider,
    rows.map((row) => row.embedding),
    texts.length,
  );
}

/** Vectors from a server, checked: one per text, all numbers, all the same length. */
export function checkVectors(provider: RouteProvider, vectors: unknown[], count: number): number[][] {
  const valid =
    vectors.length === count &&
    vectors.every(
      (v) =>
        Array.isArray(v) &&
        v.length > 0 &&
        v.length === (vectors[0] as unknown[]).length &&
        v.every((x) => typeof x === "number" && Number.isFinite(x)),
    );
  if (!valid) throw new ProviderFailure("server", `${provider}: the embeddings answer is not one vector per text`);
  return vectors as number[][];
}
