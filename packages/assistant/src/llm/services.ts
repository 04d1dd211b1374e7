import { loadConfig } from "../config/configFiles.ts";
import type { DataPaths } from "../config/paths.ts";
import type { Logger } from "../log/logger.ts";
import type { Db } from "../store/database.ts";
import type { Vault } from "../vault/vault.ts";
import { Budget } from "./budget.ts";
import { ModelDownloader } from "./embedded/download.ts";
import { createEmbeddedRuntime } from "./embedded/runtime.ts";
import { RouterMetrics } from "./metrics.ts";
import { LlmRouter, type RouterDeps } from "./router.ts";
import type { LlmSettings } from "./settings.ts";
import type { EmbeddedRuntime } from "./types.ts";

// The LLM domain as the daemon holds it: one router, its metrics, the session budget, the embedded model and its
// downloader. Nothing heavy happens here: providers and llama.cpp load on first use.

export interface LlmServices {
  router: LlmRouter;
  metrics: RouterMetrics;
  budget: Budget;
  embedded: EmbeddedRuntime;
  downloader: ModelDownloader;
}

export interface LlmServiceOptions {
  paths: DataPaths;
  /** For provider keys named by `api_key_ref`. */
  env: NodeJS.ProcessEnv;
  settings: LlmSettings;
  vault: Pick<Vault, "get">;
  db: Db;
  logger?: Logger;
}

export function createLlmServices(options: LlmServiceOptions): LlmServices {
  const { paths, settings, db, logger } = options;
  const downloader = new ModelDownloader();
  const embedded = createEmbeddedRuntime({ settings, paths, downloader, ...(logger ? { logger } : {}) });
  const metrics = new RouterMetrics(true);
  const budget = new Budget(db, settings);
  const router = routerFromFile(options, { embedded, metrics, budget });
  return { router, metrics, budget, embedded, downloader };
}

/** A router over the data directory's llm_router.yaml (the daemon's, or a CLI command's without a daemon). */
export function routerFromFile(
  options: Omit<LlmServiceOptions, "db">,
  parts: Pick<RouterDeps, "embedded" | "metrics" | "budget">,
): LlmRouter {
  const { paths, env, settings, vault, logger } = options;
  return new LlmRouter({
    loadConfig: () => loadConfig("llm_router", paths),
    env,
    settings,
    vault,
    paths,
    ...parts,
    ...(logger ? { logger } : {}),
  });
}
