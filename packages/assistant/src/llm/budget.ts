import { z } from "zod";
import type { DaemonSettings } from "../config/settings.ts";
import { type Db, statement } from "../store/database.ts";
import { AppError } from "../util/errors.ts";
import type { TokenUsage } from "./types.ts";

// Token and cost budget per chat session (docs/models.md#metrics-and-budget: ASSISTANT_MAX_TOKENS_PER_SESSION,
// ASSISTANT_MAX_COST_PER_SESSION_USD, /api/budget). Usage is stored in SQLite so a restart does not hand a
// session a fresh budget. Limits come from the environment unless POST /api/budget set them; a limit set through
// the API is stored too and wins until it is cleared (null).

export const budgetLimitsSchema = z.object({
  max_tokens_per_session: z.number().nullable(),
  max_cost_per_session_usd: z.number().nullable(),
});
export type BudgetLimits = z.infer<typeof budgetLimitsSchema>;

const LIMIT_SOURCES = ["api", "env", "none"] as const;
export type LimitSource = (typeof LIMIT_SOURCES)[number];

export const sessionUsageSchema = z
  .object({
    session_id: z.string(),
    tokens_in: z.number(),
    tokens_out: z.number(),
    cost_usd: z.number(),
    updated_at: z.string(),
  })
  .meta({ id: "SessionUsage" });
export type SessionUsage = z.infer<typeof sessionUsageSchema>;

export const budgetStatusSchema = z
  .object({
    limits: budgetLimitsSchema,
    sources: z.object({
      max_tokens_per_session: z.enum(LIMIT_SOURCES),
      max_cost_per_session_usd: z.enum(LIMIT_SOURCES),
    }),
    sessions: z.array(sessionUsageSchema),
    totals: z.object({ tokens_in: z.number(), tokens_out: z.number(), cost_usd: z.number() }),
  })
  .meta({ id: "BudgetStatus" });
export type BudgetStatus = z.infer<typeof budgetStatusSchema>;

const SETTINGS_KEY = "budget.limits";
const LIMIT_KEYS = ["max_tokens_per_session", "max_cost_per_session_usd"] as const;

export class Budget {
  private readonly db: Db;
  private readonly envLimits: BudgetLimits;

  constructor(db: Db, settings: Pick<DaemonSettings, "maxTokensPerSession" | "maxCostPerSessionUsd">) {
    this.db = db;
    this.envLimits = {
      max_tokens_per_session: settings.maxTokensPerSession ?? null,
      max_cost_per_session_usd: settings.maxCostPerSessionUsd ?? null,
    };
  }

  private overrides(): Partial<BudgetLimits> {
    const row = statement(this.db, "SELECT value FROM settings WHERE key = ?").get(SETTINGS_KEY) as
      | { value: string }
      | undefined;
    return row ? (JSON.parse(row.value) as Partial<BudgetLimits>) : {};
  }

  /** The limits in force and where each comes from. */
  limits(): Pick<BudgetStatus, "limits" | "sources"> {
    const overrides = this.overrides();
    const limits = { ...this.envLimits };
    const sources = { max_tokens_per_session: "none", max_cost_per_session_usd: "none" } as BudgetStatus["sources"];
    for (const key of LIMIT_KEYS) {
      if (overrides[key] !== undefined) {
        limits[key] = overrides[key];
        sources[key] = "api";
      } else if (limits[key] !== null) sources[key] = "env";
    }
    return { limits, sources };
  }

  status(): BudgetStatus {
    const sessions = statement(
      this.db,
      "SELECT session_id, tokens_in, tokens_out, cost_usd, updated_at FROM budget_usage ORDER BY updated_at DESC",
    ).all() as SessionUsage[];
    const totals = sessions.reduce(
      (sum, s) => ({
        tokens_in: sum.tokens_in + s.tokens_in,
        tokens_out: sum.tokens_out + s.tokens_out,
        cost_usd: sum.cost_usd + s.cost_usd,
      }),
      { tokens_in: 0, tokens_out: 0, cost_usd: 0 },
    );
    return { ...this.limits(), sessions, totals };
  }

  /** Sets limits through the API: a number sets it, null clears the API value (the environment's applies again). */
  setLimits(changes: Partial<BudgetLimits>): BudgetStatus {
    const overrides = this.overrides();
    for (const key of LIMIT_KEYS) {
      if (!(key in changes)) continue;
      const value = changes[key];
      if (value === null || value === undefined) delete overrides[key];
      else overrides[key] = value;
    }
    statement(
      this.db,
      "INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
    ).run(SETTINGS_KEY, JSON.stringify(overrides), new Date().toISOString());
    return this.status();
  }

  usage(sessionId: string): SessionUsage {
    const row = statement(
      this.db,
      "SELECT session_id, tokens_in, tokens_out, cost_usd, updated_at FROM budget_usage WHERE session_id = ?",
    ).get(sessionId) as SessionUsage | undefined;
    return (
      row ?? { session_id: sessionId, tokens_in: 0, tokens_out: 0, cost_usd: 0, updated_at: new Date().toISOString() }
    );
  }

  /** Throws `budget_exceeded` when the session has used its tokens or money; the message says what to do. */
  assertWithin(sessionId: string): void {
    const { limits } = this.limits();
    if (limits.max_tokens_per_session === null && limits.max_cost_per_session_usd === null) return;
    const used = this.usage(sessionId);
    const tokens = used.tokens_in + used.tokens_out;
    const hint =
      "start a new session (/newsession), raise the limit (POST /api/budget) or reset this session's usage (POST /api/budget/reset-session)";
    if (limits.max_tokens_per_session !== null && tokens >= limits.max_tokens_per_session) {
      throw new AppError(
        "budget_exceeded",
        `this session used ${tokens} tokens, its budget is ${limits.max_tokens_per_session} (ASSISTANT_MAX_TOKENS_PER_SESSION): ${hint}`,
        { session_id: sessionId, tokens_used: tokens, max_tokens_per_session: limits.max_tokens_per_session },
      );
    }
    if (limits.max_cost_per_session_usd !== null && used.cost_usd >= limits.max_cost_per_session_usd) {
      throw new AppError(
        "budget_exceeded",
        `this session cost an estimated $${used.cost_usd.toFixed(4)}, its budget is $${limits.max_cost_per_session_usd} (ASSISTANT_MAX_COST_PER_SESSION_USD): ${hint}`,
        { session_id: sessionId, cost_usd: used.cost_usd, max_cost_per_session_usd: limits.max_cost_per_session_usd },
      );
    }
  }

  add(sessionId: string, usage: TokenUsage, costUsd: number): void {
    statement(
      this.db,
      `INSERT INTO budget_usage (session_id, tokens_in, tokens_out, cost_usd, updated_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT(session_id) DO UPDATE SET tokens_in = tokens_in + excluded.tokens_in,
           tokens_out = tokens_out + excluded.tokens_out, cost_usd = cost_usd + excluded.cost_usd,
           updated_at = excluded.updated_at`,
    ).run(sessionId, usage.input, usage.output, costUsd, new Date().toISOString());
  }

  /** Forgets the usage of one session, or of every session; returns how many were reset. */
  resetSession(sessionId?: string): number {
    const result = sessionId
      ? statement(this.db, "DELETE FROM budget_usage WHERE session_id = ?").run(sessionId)
      : statement(this.db, "DELETE FROM budget_usage").run();
    return result.changes;
  }
}
