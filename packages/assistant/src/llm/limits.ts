import type { RouterGlobal } from "../config/schemas/llmRouter.ts";
import { ConfigError } from "../util/errors.ts";

// The LLM limits (docs/models.md#settings), read once from the environment (after the env files are applied) and the
// router file's `global`. Seconds may be fractional so short timeouts can be tested and tuned.

export interface LlmLimits {
  /** Whole call, from the request to the last chunk. */
  totalMs: number;
  /** Request sent -> first content chunk. */
  firstChunkMs: number;
  /** Longest gap between two chunks of a stream. */
  idleMs: number;
  maxResponseTokens: number;
  systemTaskMaxTokens: number;
  maxRetries: number;
  degraded: boolean;
  metricsEnabled: boolean;
}

const ENV = "environment";

function seconds(env: NodeJS.ProcessEnv, key: string): number | undefined {
  const raw = env[key]?.trim();
  if (!raw) return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0 || value > 86_400) {
    throw new ConfigError(ENV, key, `must be a number of seconds from 0 to 86400, for example 300 (got "${raw}")`);
  }
  return value;
}

function tokens(env: NodeJS.ProcessEnv, key: string, fallback: number): number {
  const raw = env[key]?.trim();
  if (!raw) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 2_147_483_647) {
    throw new ConfigError(ENV, key, `must be a whole number of tokens, for example 4096 (got "${raw}")`);
  }
  return Number(raw);
}

export function readLlmLimits(env: NodeJS.ProcessEnv, global: RouterGlobal): LlmLimits {
  const total = seconds(env, "ASSISTANT_LLM_TIMEOUT_SECS") ?? global.default_timeout_secs;
  const firstChunk = seconds(env, "ASSISTANT_LLM_FIRST_CHUNK_SECS") ?? Math.min(300, total);
  const idle = seconds(env, "ASSISTANT_LLM_STREAM_IDLE_SECS") ?? 60;
  const degraded = env.ASSISTANT_DEGRADED_MODE?.trim();
  if (degraded && degraded !== "0" && degraded !== "1") {
    throw new ConfigError(ENV, "ASSISTANT_DEGRADED_MODE", `must be 1 or 0 (got "${degraded}")`);
  }
  return {
    totalMs: total * 1000,
    firstChunkMs: Math.min(firstChunk, total) * 1000,
    idleMs: idle * 1000,
    maxResponseTokens: tokens(env, "ASSISTANT_MAX_RESPONSE_TOKENS", 4096),
    systemTaskMaxTokens: tokens(env, "ASSISTANT_SYSTEM_TASK_MAX_TOKENS", 4096),
    maxRetries: global.default_max_retries,
    degraded: degraded === "1",
    metricsEnabled: global.enable_metrics,
  };
}

/** Internal task types (memory extraction, compaction, planning) use the system token limit. */
export function isSystemTask(taskType: string): boolean {
  return taskType === "system" || taskType === "orchestrator";
}
