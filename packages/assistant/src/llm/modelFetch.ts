import type { DataPaths } from "../config/paths.ts";
import { readSettingsOf } from "../config/settings.ts";
import type { Vault } from "../vault/vault.ts";
import { ModelDownloader } from "./embedded/download.ts";
import { createEmbeddedRuntime } from "./embedded/runtime.ts";
import { RouterMetrics } from "./metrics.ts";
import { listAllModels, modelOptionsFrom, type ProviderModels } from "./models.ts";
import { editableRouterFile, saveModelOptions } from "./routeEditor.ts";
import { routerFromFile } from "./services.ts";
import { LLM_SETTINGS } from "./settings.ts";

// `assistant config models fetch`: asks every configured provider for its models' metadata and stores it under
// `model_options` in llm_router.yaml (comments kept). Works without the daemon: it builds the same providers.

export interface FetchResult {
  file: string;
  /** Model names whose metadata was stored. */
  models: string[];
  changed: boolean;
  providers: Array<{ provider: string; models: number; error: string | null }>;
}

export async function fetchModelOptions(
  paths: DataPaths,
  env: NodeJS.ProcessEnv,
  vault: Pick<Vault, "get">,
): Promise<FetchResult> {
  const settings = readSettingsOf(env, LLM_SETTINGS);
  const embedded = createEmbeddedRuntime({ settings, paths, downloader: new ModelDownloader() }); // never loads here
  const router = routerFromFile({ paths, env, settings, vault }, { embedded, metrics: new RouterMetrics(false) });
  const lists: ProviderModels[] = await listAllModels(router);
  const options = modelOptionsFrom(lists);
  const saved = saveModelOptions(editableRouterFile(paths), options);
  return {
    file: saved.file,
    models: Object.keys(options),
    changed: saved.changed,
    providers: lists.map((l) => ({ provider: l.provider, models: l.models.length, error: l.error })),
  };
}
