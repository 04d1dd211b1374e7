import type { RouterGlobal } from "../config/schemas/llmRouter.ts";
import type { DaemonSettings } from "../config/settings.ts";

// The LLM limits (docs/models.md#settings), from the environment settings and the router file's `global`. Seconds may
// be fractional so short timeouts can be tested and tuned.

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

/** The environment settings the limits come from (config/envVariables.ts). */
export type LlmLimitSettings = Pick<
  DaemonSettings,
  | "llmTimeoutSecs"
  | "llmFirstChunkSecs"
  | "llmStreamIdleSecs"
  | "maxResponseTokens"
  | "systemTaskMaxTokens"
  | "degradedMode"
>;

export function readLlmLimits(settings: LlmLimitSettings, global: RouterGlobal): LlmLimits {
  const total = settings.llmTimeoutSecs ?? global.default_timeout_secs;
  const firstChunk = settings.llmFirstChunkSecs ?? Math.min(300, total);
  return {
    totalMs: total * 1000,
    firstChunkMs: Math.min(firstChunk, total) * 1000,
    idleMs: settings.llmStreamIdleSecs * 1000,
    maxResponseTokens: settings.maxResponseTokens,
    systemTaskMaxTokens: settings.systemTaskMaxTokens,
    maxRetries: global.default_max_retries,
    degraded: settings.degradedMode,
    metricsEnabled: global.enable_metrics,
  };
}

/** Internal task types (memory extraction, compaction, planning) use the system token limit. */
export function isSystemTask(taskType: string): boolean {
  return taskType === "system" || taskType === "orchestrator";
}
