import { join } from "node:path";
import type { DataPaths } from "../../config/paths.ts";
import type { EmbeddedModelSettings } from "../settings.ts";
import { catalogueEntry } from "./catalogueEntries.ts";

// How the environment picks the embedded model (the catalogue itself is catalogueEntries.ts; the variables are
// parsed and checked by the settings registry, config/envVariables.ts).

/** `model_id` of a model named by ASSISTANT_EMBEDDED_MODEL_PATH. */
export const CUSTOM_MODEL_ID = "custom";

/** The model the environment asks for: where its file lives and, unless custom, where to download it from. */
export interface ResolvedEmbeddedModel {
  model_id: string;
  path: string;
  url?: string;
  sha256?: string;
  size_bytes?: number;
  context_length?: number;
  custom: boolean;
}

/** Where downloaded weights live: MODEL_CACHE_HOME, else the data directory's models/. */
export function modelCacheDir(
  settings: Pick<EmbeddedModelSettings, "modelCacheHome">,
  paths: Pick<DataPaths, "modelsDir">,
): string {
  return settings.modelCacheHome ?? paths.modelsDir;
}

/** The file a catalogue model is downloaded to. */
export function catalogueModelPath(
  id: string,
  settings: Pick<EmbeddedModelSettings, "modelCacheHome">,
  paths: Pick<DataPaths, "modelsDir">,
): string {
  return join(modelCacheDir(settings, paths), `${id}.gguf`);
}

/**
 * ASSISTANT_EMBEDDED_MODEL_PATH (a local GGUF used as is) wins; else ASSISTANT_EMBEDDED_MODEL (default qwen3_0_6b).
 * ASSISTANT_EMBEDDED_MODEL_URL, _SHA256 and _SIZE replace the entry's source, for a mirror or an offline
 * registry (and the tests' loopback server).
 */
export function resolveEmbeddedModel(
  settings: EmbeddedModelSettings,
  paths: Pick<DataPaths, "modelsDir">,
): ResolvedEmbeddedModel {
  if (settings.embeddedModelPath) return { model_id: CUSTOM_MODEL_ID, path: settings.embeddedModelPath, custom: true };
  // The registry only lets catalogue ids through.
  const entry = catalogueEntry(settings.embeddedModel)!;
  const resolved: ResolvedEmbeddedModel = {
    model_id: entry.id,
    path: catalogueModelPath(entry.id, settings, paths),
    url: settings.embeddedModelUrl ?? entry.url,
    sha256: settings.embeddedModelSha256 ?? entry.sha256,
    size_bytes: entry.size_bytes,
    context_length: entry.context_length,
    custom: false,
  };
  // Another file: the catalogue's size no longer applies unless given too.
  if (settings.embeddedModelSha256) delete resolved.size_bytes;
  if (settings.embeddedModelSize !== undefined) resolved.size_bytes = settings.embeddedModelSize;
  return resolved;
}
