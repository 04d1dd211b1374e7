import { z } from "zod";
import { ROUTE_PROVIDERS, type RouteProvider } from "../config/schemas/llmRouter.ts";
import type { TokenUsage } from "./types.ts";

// Router metrics per provider/model since the daemon started (docs/models.md#metrics-and-budget): counters plus the
// last SAMPLE_LIMIT latencies for percentiles. Shown by `assistant router metrics`, `/metrics`, GET /api/router/metrics
// and, as Prometheus text, GET /metrics.

const SAMPLE_LIMIT = 1000;

export interface AttemptSample {
  provider: RouteProvider;
  model: string;
  ok: boolean;
  /** This call repeated a failed call to the same target. */
  retry: boolean;
  /** This target was not the route's primary. */
  fallback: boolean;
  latencyMs: number;
  firstChunkMs?: number;
  usage?: TokenUsage;
  costUsd?: number;
  error?: string;
}

const percentilesSchema = z.object({ p50: z.number().nullable(), p95: z.number().nullable() });
export type Percentiles = z.infer<typeof percentilesSchema>;

export const modelMetricsSchema = z
  .object({
    provider: z.enum(ROUTE_PROVIDERS),
    model: z.string(),
    calls: z.number(),
    failures: z.number(),
    retries: z.number(),
    fallbacks: z.number(),
    latency_ms: percentilesSchema,
    first_chunk_ms: percentilesSchema,
    tokens_in: z.number(),
    tokens_out: z.number(),
    cost_usd: z.number(),
    last_error: z.string().nullable(),
    last_used_at: z.string().nullable(),
  })
  .meta({ id: "ModelMetrics" });

export type ModelMetrics = z.infer<typeof modelMetricsSchema>;

export const metricsSnapshotSchema = z
  .object({
    enabled: z.boolean(),
    since: z.string(),
    models: z.array(modelMetricsSchema),
    totals: z.object({
      calls: z.number(),
      failures: z.number(),
      retries: z.number(),
      fallbacks: z.number(),
      tokens_in: z.number(),
      tokens_out: z.number(),
      cost_usd: z.number(),
    }),
  })
  .meta({ id: "RouterMetrics" });

export type MetricsSnapshot = z.infer<typeof metricsSnapshotSchema>;

interface Entry {
  counters: Omit<ModelMetrics, "latency_ms" | "first_chunk_ms">;
  latencies: number[];
  firstChunks: number[];
}

function percentile(samples: number[], p: number): number | null {
  if (samples.length === 0) return null;
  const sorted = [...samples].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! * 10) / 10;
}

function pushBounded(samples: number[], value: number): void {
  samples.push(value);
  if (samples.length > SAMPLE_LIMIT) samples.shift();
}

export class RouterMetrics {
  enabled: boolean;
  private readonly since = new Date().toISOString();
  private readonly entries = new Map<string, Entry>();

  constructor(enabled: boolean) {
    this.enabled = enabled;
  }

  record(sample: AttemptSample): void {
    if (!this.enabled) return;
    const key = `${sample.provider}\u0000${sample.model}`;
    let entry = this.entries.get(key);
    if (!entry) {
      entry = {
        counters: {
          provider: sample.provider,
          model: sample.model,
          calls: 0,
          failures: 0,
          retries: 0,
          fallbacks: 0,
          tokens_in: 0,
          tokens_out: 0,
          cost_usd: 0,
          last_error: null,
          last_used_at: null,
        },
        latencies: [],
        firstChunks: [],
      };
      this.entries.set(key, entry);
    }
    const c = entry.counters;
    c.calls++;
    if (!sample.ok) {
      c.failures++;
      c.last_error = sample.error ?? "failed";
    }
    if (sample.retry) c.retries++;
    if (sample.fallback) c.fallbacks++;
    c.tokens_in += sample.usage?.input ?? 0;
    c.tokens_out += sample.usage?.output ?? 0;
    c.cost_usd += sample.costUsd ?? 0;
    c.last_used_at = new Date().toISOString();
    if (sample.ok) pushBounded(entry.latencies, sample.latencyMs);
    if (sample.firstChunkMs !== undefined) pushBounded(entry.firstChunks, sample.firstChunkMs);
  }

  snapshot(): MetricsSnapshot {
    const models = [...this.entries.values()].map((entry) => ({
      ...entry.counters,
      cost_usd: round6(entry.counters.cost_usd),
      latency_ms: { p50: percentile(entry.latencies, 50), p95: percentile(entry.latencies, 95) },
      first_chunk_ms: { p50: percentile(entry.firstChunks, 50), p95: percentile(entry.firstChunks, 95) },
    }));
    const sum = (pick: (m: ModelMetrics) => number) => models.reduce((total, m) => total + pick(m), 0);
    return {
      enabled: this.enabled,
      since: this.since,
      models,
      totals: {
        calls: sum((m) => m.calls),
        failures: sum((m) => m.failures),
        retries: sum((m) => m.retries),
        fallbacks: sum((m) => m.fallbacks),
        tokens_in: sum((m) => m.tokens_in),
        tokens_out: sum((m) => m.tokens_out),
        cost_usd: round6(sum((m) => m.cost_usd)),
      },
    };
  }

  /** Prometheus text exposition format 0.0.4. */
  prometheus(): string {
    const snapshot = this.snapshot();
    const lines: string[] = [];
    const family = (
      name: string,
      type: "counter" | "gauge",
      help: string,
      value: (m: ModelMetrics) => number | null,
    ) => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
      for (const m of snapshot.models) {
        const v = value(m);
        if (v !== null) lines.push(`${name}{provider="${label(m.provider)}",model="${label(m.model)}"} ${v}`);
      }
    };
    family("assistant_llm_calls_total", "counter", "LLM calls, retries included.", (m) => m.calls);
    family("assistant_llm_failures_total", "counter", "Failed LLM calls.", (m) => m.failures);
    family("assistant_llm_retries_total", "counter", "Calls that retried a failed call.", (m) => m.retries);
    family("assistant_llm_fallbacks_total", "counter", "Calls made to a fallback route.", (m) => m.fallbacks);
    family("assistant_llm_tokens_in_total", "counter", "Prompt tokens.", (m) => m.tokens_in);
    family("assistant_llm_tokens_out_total", "counter", "Completion tokens.", (m) => m.tokens_out);
    family("assistant_llm_cost_usd_total", "counter", "Estimated cost in USD.", (m) => m.cost_usd);
    family("assistant_llm_latency_p50_ms", "gauge", "Median latency of successful calls.", (m) => m.latency_ms.p50);
    family(
      "assistant_llm_latency_p95_ms",
      "gauge",
      "95th percentile latency of successful calls.",
      (m) => m.latency_ms.p95,
    );
    family("assistant_llm_first_chunk_p50_ms", "gauge", "Median time to the first chunk.", (m) => m.first_chunk_ms.p50);
    family(
      "assistant_llm_first_chunk_p95_ms",
      "gauge",
      "95th percentile time to the first chunk.",
      (m) => m.first_chunk_ms.p95,
    );
    return `${lines.join("\n")}\n`;
  }
}

const round6 = (n: number) => Math.round(n * 1e6) / 1e6;
// Label values escape backslash, quote and newline (exposition format).
const label = (value: string) => value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
