import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4FunctionTool,
  LanguageModelV4Prompt,
  LanguageModelV4ToolChoice,
} from "@ai-sdk/provider";
import { z } from "zod";
import type { DataPaths } from "../config/paths.ts";
import {
  type LlmRouterConfig,
  modelOptionsSchema,
  ROUTE_PROVIDERS,
  type RouteConfig,
  type RouteProvider,
} from "../config/schemas/llmRouter.ts";
import type { Vault } from "../vault/vault.ts";
import type { LlmSettings } from "./settings.ts";

// The contracts of the LLM domain. Every provider (embedded llama.cpp, core, Ollama, OpenAI-compatible, Azure,
// OpenRouter) is an AI SDK LanguageModelV4, so streaming and tool calling go through one interface; the router's
// own logic (routes, fallback, retries, timeouts, metrics, budget) drives `doStream` directly.

export type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4FunctionTool, LanguageModelV4Prompt };

/**
 * Who waits for a call: a person's new turn, a later round of a turn (or a step it waits on), or nobody (work
 * the daemon does for itself, like memory extraction). A local model serves them in this order (modelSlots.ts).
 */
export type LlmPriority = "user" | "tool" | "background";

/** A request to the router. `taskType` picks the route (any string; unknown names use the default route). */
export interface LlmRequest {
  taskType: string;
  prompt: LanguageModelV4Prompt;
  tools?: LanguageModelV4FunctionTool[];
  toolChoice?: LanguageModelV4ToolChoice;
  /** Upper bound asked by the caller; the router also caps it by the env limits and the route config. */
  maxOutputTokens?: number;
  /** Budget accounting key (a chat session). */
  sessionId?: string;
  /** Who waits for the answer (modelSlots.ts); default "user". Background calls yield a local model. */
  priority?: LlmPriority;
  signal?: AbortSignal;
}

export interface TokenUsage {
  input: number;
  output: number;
}

/**
 * What a router stream yields, in order: one `route` per attempt, one `fallback` per target that failed or was
 * skipped (the router then tries the next), then deltas, then one `finish`.
 */
export type LlmEvent =
  | { type: "route"; provider: RouteProvider; model: string; attempt: number }
  /** This target failed (after its retries) or was skipped; `reason` is sanitized (no key, URL query or body). */
  | { type: "fallback"; provider: RouteProvider; model: string; reason: string }
  /** The attempt that was streaming failed after it had produced output: discard what it produced. */
  | { type: "reset"; reason: string }
  | { type: "text"; delta: string }
  | { type: "reasoning"; delta: string }
  | { type: "tool_call"; id: string; name: string; input: string }
  | {
      type: "finish";
      provider: RouteProvider;
      model: string;
      finishReason: string;
      usage: TokenUsage;
      costUsd: number;
    };

/** How one attempt of a route went; a failed request lists every attempt. */
export interface AttemptRecord {
  provider: RouteProvider;
  model: string;
  outcome: "ok" | "failed" | "skipped";
  reason?: string;
}

/** Metadata of a model, as `config models fetch` stores it in `model_options` and `/models` lists it. */
export const modelInfoSchema = z
  .object({ provider: z.enum(ROUTE_PROVIDERS), model: z.string(), options: modelOptionsSchema })
  .meta({ id: "ModelInfo" });

export type ModelInfo = z.infer<typeof modelInfoSchema>;

/** Everything a provider may need to build a model: the router file, env, vault (keys) and data paths. */
export interface ProviderContext {
  config: LlmRouterConfig;
  /** Where a key named by `api_key_ref` (or CLOUD_A_API_KEY...) is looked up. */
  env: NodeJS.ProcessEnv;
  settings: LlmSettings;
  vault: Pick<Vault, "get">;
  paths: DataPaths;
  embedded: EmbeddedRuntime;
}

/** One file per provider under providers/; the registry (providers/index.ts) lazy-loads them. */
export interface Provider {
  id: RouteProvider;
  /** Runs on this machine or LAN (kept in degraded mode). */
  local: boolean;
  /**
   * The model for one route target. Throws `ProviderFailure` with kind "unavailable" when the provider is not
   * configured or its key is missing; no network call happens here.
   */
  languageModel(model: string): Promise<LanguageModelV4>;
  /** Call options derived from the route config (temperature, penalties, num_ctx, thinking level...). */
  callOptions(config: RouteConfig | undefined): Partial<LanguageModelV4CallOptions>;
  /** Models this provider offers right now, with whatever metadata it reports. */
  listModels(signal?: AbortSignal): Promise<ModelInfo[]>;
  /** Embedding vectors of `texts` with `model` (memory search), for providers that offer embeddings. */
  embed?(model: string, texts: readonly string[], signal?: AbortSignal): Promise<number[][]>;
}

export type ProviderFactory = (context: ProviderContext) => Provider;

/** State of the embedded model (docs/models.md#the-embedded-model); `calibrating` is part of a first load. */
export const EMBEDDED_STATUSES = ["unloaded", "downloading", "loading", "calibrating", "loaded", "failed"] as const;
export type EmbeddedStatus = (typeof EMBEDDED_STATUSES)[number];

export const embeddedCalibrationSchema = z
  .object({
    measured_at: z.string(),
    /** Measured by the first load of this file on this machine (false: on request). */
    automatic: z.boolean(),
    /** The fastest thread count measured. */
    threads: z.number(),
    gpu_layers: z.number(),
    tokens_per_second: z.number(),
    first_token_ms: z.number(),
    /** How long the measurement took. */
    duration_ms: z.number(),
    /** Each thread count tried; a slow one is cut after a few tokens. */
    candidates: z.array(
      z.object({ threads: z.number(), tokens_per_second: z.number(), first_token_ms: z.number(), tokens: z.number() }),
    ),
  })
  .meta({ id: "EmbeddedCalibration" });

export type EmbeddedCalibration = z.infer<typeof embeddedCalibrationSchema>;

export const embeddedStateSchema = z
  .object({
    status: z.enum(EMBEDDED_STATUSES),
    /** Catalogue id, or "custom" when ASSISTANT_EMBEDDED_MODEL_PATH names the file. */
    model_id: z.string(),
    path: z.string(),
    file_present: z.boolean(),
    size_bytes: z.number().nullable(),
    threads: z.number(),
    /** Where `threads` comes from: ASSISTANT_EMBEDDED_THREADS, the calibration, or the machine's core count. */
    threads_source: z.enum(["setting", "calibration", "machine"]),
    context_size: z.number(),
    gpu: z.union([z.string(), z.literal(false)]),
    gpu_layers: z.number(),
    /** The calibration of this model file on this machine, when one was measured. */
    calibration: embeddedCalibrationSchema.nullable(),
    error: z.string().nullable(),
  })
  .meta({ id: "EmbeddedState" });

export type EmbeddedState = z.infer<typeof embeddedStateSchema>;

/** The embedded llama.cpp model, owned by the daemon, loaded lazily on first use. */
export interface EmbeddedRuntime {
  state(): EmbeddedState;
  /** The AI SDK model backed by llama.cpp; loading (and downloading when missing) happens on first call. */
  languageModel(): LanguageModelV4;
  /** One embedding vector per text (memory search); only when the model file is already present. */
  embed(texts: readonly string[], signal?: AbortSignal): Promise<number[][]>;
  /** Drops the weights; the next request loads them again. */
  unload(): Promise<void>;
  calibrate(signal?: AbortSignal): Promise<EmbeddedCalibration>;
  close(): Promise<void>;
}
