import { setTimeout as sleep } from "node:timers/promises";
import type { DataPaths } from "../config/paths.ts";
import type { LlmRouterConfig, RouteConfig, RouteProvider } from "../config/schemas/llmRouter.ts";
import type { Logger } from "../log/logger.ts";
import { AppError } from "../util/errors.ts";
import type { Vault } from "../vault/vault.ts";
import { runAttempt } from "./attempt.ts";
import type { Budget } from "./budget.ts";
import { ProviderFailure, routesExhausted } from "./errors.ts";
import { toProviderFailure } from "./failure.ts";
import { isSystemTask, type LlmLimits, readLlmLimits } from "./limits.ts";
import type { RouterMetrics } from "./metrics.ts";
import { ModelSlots, type SlotLease, slotPolicyFor } from "./modelSlots.ts";
import { costOf, estimateTokens, priceFor } from "./prices.ts";
import { loadProvider } from "./providers/index.ts";
import { type ResolvedRoute, resolveRoute } from "./routing.ts";
import type { LlmSettings } from "./settings.ts";
import type {
  AttemptRecord,
  EmbeddedRuntime,
  LanguageModelV4,
  LlmEvent,
  LlmRequest,
  Provider,
  ProviderContext,
  TokenUsage,
} from "./types.ts";

// The router: resolves a task type to its targets, then tries them in order. Each target gets up to
// `default_max_retries` retries of retryable failures (server errors, 429 honouring Retry-After, timeouts, cut
// streams), with exponential backoff; other failures move on to the next target at once. Metrics and the
// session budget are updated from the same place. A target that failed (or was skipped) yields a `fallback`
// event with the sanitized reason before the next one is tried, and assistant_core is told which targets failed,
// so the person sees what broke (docs/models.md#when-a-model-fails). Streams are passed through untouched, so the
// router adds no latency beyond its bookkeeping. Each attempt holds a slot of its provider's scheduler
// (modelSlots.ts) by the request's priority; a background attempt a foreground call preempts is retried once the
// model is free again, without counting as a failure or a retry.

export interface RouterDeps {
  /** Reads and validates llm_router.yaml (called again by reload()). */
  loadConfig: () => LlmRouterConfig;
  /** For keys named by `api_key_ref` (providers look them up). */
  env: NodeJS.ProcessEnv;
  settings: LlmSettings;
  vault: Pick<Vault, "get">;
  paths: DataPaths;
  embedded: EmbeddedRuntime;
  metrics: RouterMetrics;
  budget?: Budget;
  logger?: Logger;
  /** First retry delay; doubles each retry (tests shorten it). */
  backoffBaseMs?: number;
}

export interface LlmResult {
  text: string;
  toolCalls: Array<{ id: string; name: string; input: string }>;
  usage: TokenUsage;
  costUsd: number;
  provider: RouteProvider;
  model: string;
  finishReason: string;
  /** Calls made, retries and fallbacks included. */
  calls: number;
}

const MAX_BACKOFF_MS = 10_000;
/** A Retry-After longer than this moves on to the next route instead of waiting. */
const MAX_RETRY_WAIT_MS = 30_000;

export class LlmRouter {
  private readonly deps: RouterDeps;
  private config!: LlmRouterConfig;
  private limitsValue!: LlmLimits;
  private readonly providers = new Map<RouteProvider, Promise<Provider>>();
  private readonly models = new Map<string, Promise<LanguageModelV4>>();
  private readonly slots = new Map<RouteProvider, ModelSlots | null>();

  constructor(deps: RouterDeps) {
    this.deps = deps;
    this.reload();
  }

  /** Re-reads the router file and env limits; throws (keeping the previous configuration) when invalid. */
  reload(): void {
    const config = this.deps.loadConfig();
    const limits = readLlmLimits(this.deps.settings, config.global);
    this.config = config;
    this.limitsValue = limits;
    this.deps.metrics.enabled = limits.metricsEnabled;
    this.providers.clear();
    this.models.clear();
    this.slots.clear(); // calls in flight release their slot on the scheduler they took it from
  }

  get configuration(): LlmRouterConfig {
    return this.config;
  }

  get limits(): LlmLimits {
    return this.limitsValue;
  }

  resolve(taskType: string): ResolvedRoute {
    return resolveRoute(this.config, taskType, { degraded: this.limitsValue.degraded });
  }

  provider(id: RouteProvider): Promise<Provider> {
    const cached = this.providers.get(id);
    if (cached) return cached;
    const context: ProviderContext = {
      config: this.config,
      env: this.deps.env,
      settings: this.deps.settings,
      vault: this.deps.vault,
      paths: this.deps.paths,
      embedded: this.deps.embedded,
    };
    const provider = loadProvider(id, context);
    provider.catch(() => this.providers.delete(id)); // a failed import is retried next time
    this.providers.set(id, provider);
    return provider;
  }

  private model(provider: Provider, model: string): Promise<LanguageModelV4> {
    const key = `${provider.id}\u0000${model}`;
    let cached = this.models.get(key);
    if (!cached) {
      cached = provider.languageModel(model);
      cached.catch(() => this.models.delete(key)); // e.g. a key added to the vault later
      this.models.set(key, cached);
    }
    return cached;
  }

  /** The scheduler of a provider's model, or null when its calls need none (cloud, assistant_core). */
  private modelSlots(provider: Pick<Provider, "id" | "local">): ModelSlots | null {
    let slots = this.slots.get(provider.id);
    if (slots === undefined) {
      const policy = slotPolicyFor(provider, this.config);
      slots = policy ? new ModelSlots(policy) : null;
      this.slots.set(provider.id, slots);
    }
    return slots;
  }

  private maxOutputTokens(request: LlmRequest, config: RouteConfig | undefined): number {
    const limit = isSystemTask(request.taskType)
      ? this.limitsValue.systemTaskMaxTokens
      : this.limitsValue.maxResponseTokens;
    return Math.min(request.maxOutputTokens ?? Number.POSITIVE_INFINITY, config?.max_tokens ?? limit);
  }

  async *stream(request: LlmRequest): AsyncGenerator<LlmEvent> {
    const route = this.resolve(request.taskType);
    if (route.targets.length === 0) {
      if (route.dropped.length > 0) {
        throw new AppError(
          "provider_unavailable",
          `ASSISTANT_DEGRADED_MODE=1 keeps only local providers, and the route for "${request.taskType}" has none (${route.dropped.map((t) => `${t.provider}/${t.model}`).join(", ")})`,
          { task_type: request.taskType },
        );
      }
      throw new AppError(
        "provider_unavailable",
        `no route for "${request.taskType}": add task_types.${request.taskType} to llm_router.yaml`,
        { task_type: request.taskType },
      );
    }
    if (request.sessionId) this.deps.budget?.assertWithin(request.sessionId);
    const attempts: AttemptRecord[] = [];
    const failures: ProviderFailure[] = [];
    let promptTokens: number | undefined; // estimated once, and only for a route with a cost limit
    const priority = request.priority ?? "user";
    let attemptNo = 0;
    /** The targets that failed so far, as the `fallback` events named them. */
    const failed = () =>
      attempts
        .filter((a) => a.outcome !== "ok")
        .map((a) => ({ provider: a.provider, model: a.model, reason: a.reason ?? a.outcome }));

    for (const [index, target] of route.targets.entries()) {
      const skip = (failure: ProviderFailure): LlmEvent => {
        failures.push(failure);
        attempts.push({ provider: target.provider, model: target.model, outcome: "skipped", reason: failure.message });
        return { type: "fallback", provider: target.provider, model: target.model, reason: failure.message };
      };
      let provider: Provider;
      try {
        provider = await this.provider(target.provider);
      } catch (error) {
        yield skip(toProviderFailure(error));
        continue;
      }
      const price = priceFor(target.provider, target.model, this.config.model_options);
      const maxOutputTokens = this.maxOutputTokens(request, target.config);
      const maxCost = route.constraints?.max_cost_per_request;
      if (maxCost !== undefined && price) {
        promptTokens ??= estimateTokens(JSON.stringify(request.prompt));
        const estimate = costOf(price, {
          input: promptTokens,
          output: Number.isFinite(maxOutputTokens) ? maxOutputTokens : 0,
        });
        if (estimate > maxCost) {
          yield skip(
            new ProviderFailure(
              "constraint",
              `estimated cost $${estimate.toFixed(4)} exceeds max_cost_per_request $${maxCost}`,
            ),
          );
          continue;
        }
      }
      const maxLatencyMs = (route.constraints?.max_latency_secs ?? Number.POSITIVE_INFINITY) * 1000;
      const timeouts = {
        totalMs: Math.min(this.limitsValue.totalMs, maxLatencyMs),
        firstChunkMs: Math.min(this.limitsValue.firstChunkMs, maxLatencyMs),
        idleMs: this.limitsValue.idleMs,
      };

      let lastFailure: ProviderFailure | undefined;
      let retry = 0;
      let preemptions = 0;
      for (; ; retry++) {
        yield { type: "route", provider: target.provider, model: target.model, attempt: ++attemptNo };
        let startedAt = performance.now();
        let emitted = false;
        let answer = ""; // kept only for ASSISTANT_LOG_LLM_RESPONSE
        let lease: SlotLease | null = null;
        try {
          lease = (await this.modelSlots(provider)?.acquire(priority, request.signal, preemptions)) ?? null;
          startedAt = performance.now(); // the wait for a slot is not the model's latency
          // Only a background call can be preempted, so only it listens to its lease.
          const signal = lease && priority === "background" ? anySignal(request.signal, lease.signal) : request.signal;
          const model = await this.model(provider, target.model);
          const options = {
            ...provider.callOptions(target.config),
            prompt: request.prompt,
            ...(request.tools?.length ? { tools: request.tools, toolChoice: request.toolChoice } : {}),
            ...(Number.isFinite(maxOutputTokens) ? { maxOutputTokens } : {}),
            // The core names what failed before it instead of a generic "no model" (providers/core.ts).
            ...(target.provider === "assistant_core" && attempts.length > 0
              ? { providerOptions: { assistant_core: { failed: failed() } } }
              : {}),
          };
          for await (const part of runAttempt(model, options, timeouts, signal)) {
            if (part.type !== "finish") {
              emitted = true;
              if (part.type === "text" && this.deps.settings.logLlmResponse) answer += part.delta;
              yield part;
              continue;
            }
            const costUsd = costOf(price, part.usage);
            this.deps.metrics.record({
              provider: target.provider,
              model: target.model,
              ok: true,
              retry: retry > 0,
              fallback: index > 0,
              latencyMs: performance.now() - startedAt,
              firstChunkMs: part.firstChunkMs,
              usage: part.usage,
              costUsd,
            });
            if (request.sessionId) this.deps.budget?.add(request.sessionId, part.usage, costUsd);
            attempts.push({ provider: target.provider, model: target.model, outcome: "ok" });
            if (this.deps.settings.logLlmResponse) {
              // The logger redacts every secret the vault knows before the line is written.
              this.deps.logger?.info("llm response", {
                task_type: request.taskType,
                provider: target.provider,
                model: target.model,
                text: answer,
              });
            }
            yield {
              type: "finish",
              provider: target.provider,
              model: target.model,
              finishReason: part.finishReason,
              usage: part.usage,
              costUsd,
            };
            return;
          }
        } catch (error) {
          if (request.signal?.aborted) throw error;
          if (lease?.preempted) {
            // A foreground call took the model: start over once it is free (the next acquire waits for that).
            if (emitted) yield { type: "reset", reason: "preempted by a foreground call" };
            preemptions++;
            retry--;
            continue;
          }
          const failure = toProviderFailure(error);
          lastFailure = failure;
          this.deps.metrics.record({
            provider: target.provider,
            model: target.model,
            ok: false,
            retry: retry > 0,
            fallback: index > 0,
            latencyMs: performance.now() - startedAt,
            error: failure.message,
          });
          this.deps.logger?.warn("llm call failed", {
            provider: target.provider,
            model: target.model,
            kind: failure.kind,
            reason: failure.message,
            retry,
          });
          if (emitted) yield { type: "reset", reason: failure.message };
          const wait = failure.retryAfterMs ?? this.backoff(retry);
          if (failure.retryable && retry < this.limitsValue.maxRetries && wait <= MAX_RETRY_WAIT_MS) {
            lease?.release(); // other calls use the model during the backoff
            await sleep(wait, undefined, { signal: request.signal });
            continue;
          }
        } finally {
          lease?.release();
        }
        break;
      }
      if (lastFailure) {
        failures.push(lastFailure);
        const reason =
          retry > 0
            ? `${lastFailure.message} (after ${retry} ${retry === 1 ? "retry" : "retries"})`
            : lastFailure.message;
        attempts.push({ provider: target.provider, model: target.model, outcome: "failed", reason });
        yield { type: "fallback", provider: target.provider, model: target.model, reason };
      }
    }
    throw routesExhausted(request.taskType, attempts, failures);
  }

  /** The whole reply at once (system tasks, `wait: true`). A reset discards what the failed attempt produced. */
  async complete(request: LlmRequest): Promise<LlmResult> {
    let text = "";
    let toolCalls: LlmResult["toolCalls"] = [];
    let calls = 0;
    for await (const event of this.stream(request)) {
      if (event.type === "route") calls++;
      else if (event.type === "text") text += event.delta;
      else if (event.type === "tool_call") toolCalls.push({ id: event.id, name: event.name, input: event.input });
      else if (event.type === "reset") {
        text = "";
        toolCalls = [];
      } else if (event.type === "finish") {
        return {
          text,
          toolCalls,
          usage: event.usage,
          costUsd: event.costUsd,
          provider: event.provider,
          model: event.model,
          finishReason: event.finishReason,
          calls,
        };
      }
    }
    throw new AppError("internal", "the model stream ended without a finish");
  }

  private backoff(retry: number): number {
    const base = this.deps.backoffBaseMs ?? 500;
    const delay = Math.min(MAX_BACKOFF_MS, base * 2 ** retry);
    return delay / 2 + Math.random() * (delay / 2); // jitter so clients do not retry in lockstep
  }
}

function anySignal(request: AbortSignal | undefined, lease: AbortSignal): AbortSignal {
  return request ? AbortSignal.any([request, lease]) : lease;
}
