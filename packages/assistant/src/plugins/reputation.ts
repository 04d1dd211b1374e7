import { z } from "zod";
import type { EventLog } from "../events/eventLog.ts";
import type { Db } from "../store/database.ts";

// Plugin reputation (docs/plugins.md#reputation): every call's outcome and every piece of user feedback moves
// a plugin's score; when the score falls under the threshold the plugin is disabled by reputation, says why, and
// stays off (across restarts) until its reputation is reset. Scores start at 100 and never exceed it.

export const START_SCORE = 100;

export type Outcome = "success" | "failure" | "timeout" | "trap" | "denied" | "feedback_up" | "feedback_down";

/** How much one outcome moves the score: a hang or a crash costs far more than an ordinary error. */
const WEIGHT: Record<Outcome, number> = {
  success: 1,
  failure: -5,
  timeout: -15,
  trap: -15,
  denied: -10,
  feedback_up: 5,
  feedback_down: -10,
};

const COLUMN: Record<Outcome, string> = {
  success: "successes",
  failure: "failures",
  timeout: "timeouts",
  trap: "traps",
  denied: "denied",
  feedback_up: "feedback_up",
  feedback_down: "feedback_down",
};

export const reputationSchema = z
  .object({
    plugin_id: z.string(),
    score: z.number(),
    successes: z.number(),
    failures: z.number(),
    timeouts: z.number(),
    traps: z.number(),
    denied: z.number(),
    feedback_up: z.number(),
    feedback_down: z.number(),
    disabled_by_reputation: z.boolean(),
    disabled_reason: z.string().nullable(),
    threshold: z.number(),
    /** When the last outcome was recorded; absent until the first one. */
    updated_at: z.string().optional(),
  })
  .meta({ id: "PluginReputation" });

export type Reputation = z.infer<typeof reputationSchema>;

interface Row extends Omit<Reputation, "disabled_by_reputation" | "threshold"> {
  disabled: number;
}

export class ReputationStore {
  readonly #db: Db;
  readonly #events: Pick<EventLog, "emit">;
  readonly threshold: number;
  /** Rows as last read or written: tool lookups ask on every call, and only this store writes the table. */
  readonly #cache = new Map<string, Reputation>();

  constructor(db: Db, events: Pick<EventLog, "emit">, threshold: number) {
    this.#db = db;
    this.#events = events;
    this.threshold = threshold;
  }

  get(pluginId: string): Reputation {
    const cached = this.#cache.get(pluginId);
    if (cached) return cached;
    const reputation = this.#read(pluginId);
    this.#cache.set(pluginId, reputation);
    return reputation;
  }

  #read(pluginId: string): Reputation {
    const row = this.#db.prepare("SELECT * FROM plugin_reputation WHERE plugin_id = ?").get(pluginId) as
      | Row
      | undefined;
    if (!row) {
      return {
        plugin_id: pluginId,
        score: START_SCORE,
        successes: 0,
        failures: 0,
        timeouts: 0,
        traps: 0,
        denied: 0,
        feedback_up: 0,
        feedback_down: 0,
        disabled_by_reputation: false,
        disabled_reason: null,
        threshold: this.threshold,
      };
    }
    const { disabled, ...rest } = row;
    return { ...rest, disabled_by_reputation: disabled === 1, threshold: this.threshold };
  }

  /** Records one outcome; returns the new reputation (disabled when the score fell under the threshold). */
  record(pluginId: string, outcome: Outcome): Reputation {
    const before = this.get(pluginId);
    const score = Math.min(START_SCORE, Math.max(0, before.score + WEIGHT[outcome]));
    const disable = !before.disabled_by_reputation && score < this.threshold;
    const reason = disable ? disabledReason(before, outcome, score, this.threshold) : before.disabled_reason;
    const column = COLUMN[outcome];
    const now = new Date().toISOString();
    this.#db
      .prepare(
        `INSERT INTO plugin_reputation (plugin_id, score, ${column}, disabled, disabled_reason, updated_at)
         VALUES (?, ?, 1, ?, ?, ?)
         ON CONFLICT(plugin_id) DO UPDATE SET score = excluded.score, ${column} = ${column} + 1,
           disabled = excluded.disabled, disabled_reason = excluded.disabled_reason, updated_at = excluded.updated_at`,
      )
      .run(pluginId, score, before.disabled_by_reputation || disable ? 1 : 0, reason, now);
    this.#cache.delete(pluginId);
    if (disable) this.#events.emit("plugin_disabled", { plugin_id: pluginId, score, reason: reason! });
    return this.get(pluginId);
  }

  /** Back to a clean start: one plugin, or every plugin when `pluginId` is null. */
  reset(pluginId: string | null): number {
    const result =
      pluginId === null
        ? this.#db.prepare("DELETE FROM plugin_reputation").run()
        : this.#db.prepare("DELETE FROM plugin_reputation WHERE plugin_id = ?").run(pluginId);
    if (pluginId === null) this.#cache.clear();
    else this.#cache.delete(pluginId);
    this.#events.emit("plugin_reputation_reset", { plugin_id: pluginId });
    return result.changes;
  }

  forget(pluginId: string): void {
    this.#db.prepare("DELETE FROM plugin_reputation WHERE plugin_id = ?").run(pluginId);
    this.#cache.delete(pluginId);
  }
}

function disabledReason(before: Reputation, last: Outcome, score: number, threshold: number): string {
  const count = (k: keyof Reputation) => (before[k] as number) + (COLUMN[last] === k ? 1 : 0);
  const bad = (["failures", "timeouts", "traps", "denied", "feedback_down"] as const)
    .filter((k) => count(k) > 0)
    .map((k) => `${count(k)} ${k.replace("_", " ")}`);
  return `disabled by reputation: score ${score} fell under ${threshold} (${bad.join(", ")}); reset its reputation to enable it again`;
}
