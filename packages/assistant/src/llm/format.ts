import { plural } from "../util/plural.ts";
import type { BudgetStatus } from "./budget.ts";
import type { MetricsSnapshot } from "./metrics.ts";
import type { ProviderModels } from "./models.ts";
import type { RouteView } from "./routeEditor.ts";
import type { EmbeddedState } from "./types.ts";

// Plain-text views of the router's state, shared by the CLI (`assistant router metrics`...) and the slash
// commands, so a terminal and a chat channel show the same thing.

const target = (t: { provider: string; model: string } | null) => (t ? `${t.provider}/${t.model}` : "(none)");

export function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((row) => row[col]!.length)));
  return rows
    .map((row) =>
      row
        .map((cell, col) => cell.padEnd(widths[col]!))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

/** Routes per category; "(default)" beside its name marks a category without an entry of its own. */
export function formatRoutes(routes: RouteView[]): string {
  const rows = routes.map((r) => [
    r.source === "default" ? `${r.category} (default)` : r.category,
    target(r.primary),
    r.fallback.map(target).join(", "),
  ]);
  return table([["CATEGORY", "PRIMARY", "FALLBACK"], ...rows]);
}

const ms = (v: number | null) => (v === null ? "-" : `${Math.round(v)}`);

export function formatMetrics(snapshot: MetricsSnapshot): string {
  if (!snapshot.enabled) return "Router metrics are off (global.enable_metrics: false in llm_router.yaml).";
  if (snapshot.models.length === 0) return `No LLM calls since ${snapshot.since}.`;
  const rows = [
    [
      "PROVIDER/MODEL",
      "CALLS",
      "FAIL",
      "RETRY",
      "FALLBK",
      "P50 MS",
      "P95 MS",
      "1ST P50",
      "TOK IN",
      "TOK OUT",
      "COST $",
    ],
  ];
  for (const m of snapshot.models) {
    rows.push([
      `${m.provider}/${m.model}`,
      String(m.calls),
      String(m.failures),
      String(m.retries),
      String(m.fallbacks),
      ms(m.latency_ms.p50),
      ms(m.latency_ms.p95),
      ms(m.first_chunk_ms.p50),
      String(m.tokens_in),
      String(m.tokens_out),
      m.cost_usd.toFixed(4),
    ]);
  }
  const t = snapshot.totals;
  return `${table(rows)}\nSince ${snapshot.since}: ${plural(t.calls, "call")}, ${t.failures} failed, ${plural(t.tokens_in + t.tokens_out, "token")}, $${t.cost_usd.toFixed(4)} estimated.`;
}

export function formatModels(lists: ProviderModels[]): string {
  const lines: string[] = [];
  for (const list of lists) {
    if (list.error) {
      lines.push(`${list.provider}: unavailable (${list.error})`);
      continue;
    }
    lines.push(`${list.provider}: ${list.models.length === 0 ? "no models" : ""}`.trimEnd());
    for (const m of list.models) {
      const o = m.options;
      const facts = [
        o.parameter_size,
        o.family,
        o.context_length_max ? `ctx ${o.context_length_max}` : undefined,
        o.capabilities?.length ? o.capabilities.join("/") : undefined,
        o.extra?.downloaded === false ? "not downloaded" : undefined,
      ].filter(Boolean);
      lines.push(`  ${m.model}${facts.length ? `  (${facts.join(", ")})` : ""}`);
    }
  }
  return lines.join("\n");
}

export function formatEmbedded(state: EmbeddedState): string {
  const source = {
    setting: "ASSISTANT_EMBEDDED_THREADS",
    calibration: "calibrated",
    machine: state.status === "calibrating" ? "calibrating now" : "not calibrated yet: the first load measures",
  }[state.threads_source];
  const lines = [
    `Embedded model: ${state.model_id} (${state.status})`,
    `  file: ${state.path}${state.file_present ? "" : " (not downloaded yet: `assistant config models embedded-download`)"}`,
    `  threads ${state.threads} (${source}), context ${state.context_size}, GPU ${state.gpu === false ? "none" : `${state.gpu} (${state.gpu_layers} layers)`}`,
  ];
  if (state.calibration) {
    const c = state.calibration;
    const tried = c.candidates.map((t) => `${t.threads}: ${t.tokens_per_second.toFixed(1)}`).join(", ");
    lines.push(
      `  calibration ${c.automatic ? "at first load" : "on request"} ${c.measured_at} in ${(c.duration_ms / 1000).toFixed(1)} s: best ${c.threads} threads, ${c.tokens_per_second.toFixed(1)} tokens/s (threads: tokens/s ${tried})`,
    );
  }
  if (state.error) lines.push(`  last error: ${state.error}`);
  return lines.join("\n");
}

const LIMIT_SOURCE = { api: "set with `assistant budget set`", env: "from the environment", none: "no limit" } as const;

/** The per-session limits with where each comes from, then the usage of each session. */
export function formatBudget(status: BudgetStatus): string {
  const { limits, sources } = status;
  const tokens = limits.max_tokens_per_session;
  const cost = limits.max_cost_per_session_usd;
  const lines = [
    "Limits per session:",
    `  tokens  ${tokens === null ? "-" : tokens}  (${LIMIT_SOURCE[sources.max_tokens_per_session]})`,
    `  cost    ${cost === null ? "-" : `$${cost}`}  (${LIMIT_SOURCE[sources.max_cost_per_session_usd]})`,
  ];
  if (status.sessions.length === 0) return `${lines.join("\n")}\nNo session has used tokens yet.`;
  const rows = [["SESSION", "TOK IN", "TOK OUT", "COST $", "UPDATED"]];
  for (const s of status.sessions) {
    rows.push([s.session_id, String(s.tokens_in), String(s.tokens_out), s.cost_usd.toFixed(4), s.updated_at]);
  }
  const t = status.totals;
  return [
    ...lines,
    "",
    table(rows),
    `Total: ${plural(t.tokens_in + t.tokens_out, "token")}, $${t.cost_usd.toFixed(4)} estimated.`,
  ].join("\n");
}
