import { statSync } from "node:fs";
import type { RouteConfig } from "../../config/schemas/llmRouter.ts";
import { CUSTOM_MODEL_ID, catalogueModelPath } from "../embedded/catalogue.ts";
import { EMBEDDED_CATALOGUE } from "../embedded/catalogueEntries.ts";
import { EMBEDDED_PROVIDER_ID } from "../embedded/languageModel.ts";
import { ProviderFailure } from "../errors.ts";
import type { ModelInfo, Provider, ProviderFactory } from "../types.ts";
import { commonCallOptions, definedOnly } from "./httpCommon.ts";

// assistant_embedded: the llama.cpp model the daemon owns (context.embedded). Route model "default" means
// whatever the environment selected; a catalogue id must be that same model, since one model is loaded at a time.

export const createEmbeddedProvider: ProviderFactory = (context): Provider => ({
  id: "assistant_embedded",
  local: true,

  async languageModel(model) {
    const active = context.embedded.state().model_id;
    if (model !== "default" && model !== active) {
      throw new ProviderFailure(
        "unavailable",
        `the embedded model is ${active}; a route asking for "${model}" needs ASSISTANT_EMBEDDED_MODEL=${model} (or model "default")`,
      );
    }
    return context.embedded.languageModel();
  },

  callOptions(config: RouteConfig | undefined) {
    if (!config) return {};
    return {
      ...commonCallOptions(config),
      ...definedOnly({ topK: config.top_k }),
      ...(config.repeat_penalty !== undefined
        ? { providerOptions: { [EMBEDDED_PROVIDER_ID]: { repeat_penalty: config.repeat_penalty } } }
        : {}),
    };
  },

  async embed(model, texts, signal) {
    const active = context.embedded.state().model_id;
    if (model !== "default" && model !== active) {
      throw new ProviderFailure("unavailable", `the embedded model is ${active}, not ${model} (use model "default")`);
    }
    return context.embedded.embed(texts, signal);
  },

  async listModels() {
    const state = context.embedded.state();
    const models: ModelInfo[] = EMBEDDED_CATALOGUE.map((entry) => ({
      provider: "assistant_embedded",
      model: entry.id,
      options: {
        context_length_max: entry.context_length,
        extra: {
          label: entry.label,
          downloaded: fileSize(catalogueModelPath(entry.id, context.settings, context.paths)) !== null,
          size_bytes: entry.size_bytes,
          active: entry.id === state.model_id,
        },
      },
    }));
    if (state.model_id === CUSTOM_MODEL_ID) {
      models.push({
        provider: "assistant_embedded",
        model: CUSTOM_MODEL_ID,
        options: {
          extra: { label: state.path, downloaded: state.file_present, size_bytes: state.size_bytes, active: true },
        },
      });
    }
    return models;
  },
});

function fileSize(path: string): number | null {
  try {
    const info = statSync(path);
    return info.isFile() ? info.size : null;
  } catch {
    return null;
  }
}
