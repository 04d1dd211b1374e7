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
  env: NodeJS.ProcessEnv;
  vault: Pick<Vault, "get">;
  db: Db;
  logger?: Logger;
}

export function createLlmServices(options: LlmServiceOptions): LlmServices {
  const { paths, env, db, logger } = options;
  const downloader = new ModelDownloader();
  const embedded = createEmbeddedRuntime({ env, paths, downloader, ...(logger ? { logger } : {}) });
  const metrics = new RouterMetrics(true);
  const budget = new Budget(db, env);
  const router = routerFromFile(options, { embedded, metrics, budget });
  return { router, metrics, budget, embedded, downloader };
}

/** A router over the data directory's llm_router.yaml (the daemon's, or a CLI command's without a daemon). */
export function routerFromFile(
  options: Omit<LlmServiceOptions, "db">,
  parts: Pick<RouterDeps, "embedded" | "metrics" | "budget">,
): LlmRouter {
  const { paths, env, vault, logger } = options;
  return new LlmRouter({
    loadConfig: () => loadConfig("llm_router", paths),
    env,
    vault,
    paths,
    ...parts,
    ...(logger ? { logger } : {}),
  });
}
