import type { DaemonSettings } from "../config/settings.ts";

// The environment settings the LLM domain reads (config/envVariables.ts): the daemon hands over its parsed
// settings; a CLI command that builds a router or looks at the embedded model parses just these.

/** Which embedded model and where its file is (doctor, `assistant embedded-download`, the runtime). */
export const EMBEDDED_MODEL_SETTINGS = [
  "embeddedModel",
  "embeddedModelPath",
  "embeddedModelUrl",
  "embeddedModelSha256",
  "embeddedModelSize",
  "modelCacheHome",
] as const;

export const LLM_SETTINGS = [
  ...EMBEDDED_MODEL_SETTINGS,
  "embeddedThreads",
  "embeddedContext",
  "embeddedGpu",
  "llmTimeoutSecs",
  "llmFirstChunkSecs",
  "llmStreamIdleSecs",
  "maxResponseTokens",
  "systemTaskMaxTokens",
  "degradedMode",
  "maxTokensPerSession",
  "maxCostPerSessionUsd",
  "logLlmResponse",
  "localServerHost",
  "cloudBSiteUrl",
  "cloudBAppTitle",
] as const;

export type EmbeddedModelSettings = Pick<DaemonSettings, (typeof EMBEDDED_MODEL_SETTINGS)[number]>;
export type LlmSettings = Pick<DaemonSettings, (typeof LLM_SETTINGS)[number]>;
