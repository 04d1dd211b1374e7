import { createOllama } from "ollama-ai-provider-v2";
import type { ModelOptions, RouteConfig } from "../../config/schemas/llmRouter.ts";
import type { ModelInfo, Provider, ProviderContext, ProviderFactory } from "../types.ts";
import {
  asArray,
  asRecord,
  checkVectors,
  commonCallOptions,
  definedOnly,
  requestJson,
  serverRoot,
  withRequestRewrite,
} from "./httpCommon.ts";

// local_server: Ollama through its native API (/api/chat, /api/tags, /api/show) at the server's root URL.

const DEFAULT_HOST = "http://localhost:11434";

/** providers.local_server.base_url, else LOCAL_SERVER_HOST, else Ollama's default; always the root URL. */
export function ollamaRoot(context: Pick<ProviderContext, "config" | "settings">): string {
  const configured = context.config.providers.local_server?.base_url ?? context.settings.localServerHost;
  // Tolerates the /api or OpenAI-compatible /v1 suffix users copy from Ollama's docs.
  return serverRoot(configured || DEFAULT_HOST);
}

export const createOllamaProvider: ProviderFactory = (context): Provider => {
  const root = ollamaRoot(context);

  return {
    id: "local_server",
    local: true,
    async languageModel(model) {
      return withRequestRewrite(
        (fetch) => createOllama({ baseURL: `${root}/api`, fetch }).chat(model),
        ({ body }, options) => {
          // Ollama reads sampling settings only from `options`. The library sends temperature, top_p and
          // max_output_tokens at the top level (ignored by Ollama), drops top_k and the penalties, and strips
          // option names its schema lacks (num_gpu); rebuild `options` from the call options instead.
          const native = {
            ...definedOnly({
              temperature: options.temperature,
              top_p: options.topP,
              top_k: options.topK,
              num_predict: options.maxOutputTokens,
              frequency_penalty: options.frequencyPenalty,
              presence_penalty: options.presencePenalty,
              seed: options.seed,
              stop: options.stopSequences,
            }),
            ...asRecord(asRecord(options.providerOptions?.ollama).options),
          };
          delete body.temperature;
          delete body.top_p;
          delete body.max_output_tokens;
          if (Object.keys(native).length > 0) body.options = native;
          else delete body.options;
        },
      );
    },
    callOptions(config: RouteConfig | undefined) {
      if (!config) return {};
      const ollamaOptions = definedOnly({
        num_ctx: config.num_ctx,
        num_gpu: config.num_gpu,
        repeat_penalty: config.repeat_penalty,
      });
      return {
        ...commonCallOptions(config),
        ...definedOnly({ topK: config.top_k }),
        ...(Object.keys(ollamaOptions).length > 0 ? { providerOptions: { ollama: { options: ollamaOptions } } } : {}),
      };
    },
    async embed(model, texts, signal) {
      // Ollama's native embedding API: {model, input: [...]} -> {embeddings: [[...]]}.
      const body = asRecord(
        await requestJson("local_server", `${root}/api/embed`, {
          method: "POST",
          body: { model, input: texts },
          signal,
        }),
      );
      return checkVectors("local_server", asArray(body.embeddings), texts.length);
    },
    async listModels(signal) {
      const tags = asRecord(await requestJson("local_server", `${root}/api/tags`, { signal }));
      const entries = asArray(tags.models).map(asRecord);
      return Promise.all(
        entries.flatMap((entry) => {
          const name = typeof entry.name === "string" ? entry.name : entry.model;
          return typeof name === "string" ? [describe(root, name, entry, signal)] : [];
        }),
      );
    },
  };
};

/** One /api/tags entry plus its /api/show details (context length, capabilities). */
async function describe(
  root: string,
  model: string,
  tag: Record<string, unknown>,
  signal: AbortSignal | undefined,
): Promise<ModelInfo> {
  const show = asRecord(
    await requestJson("local_server", `${root}/api/show`, { method: "POST", body: { model }, signal }),
  );
  const details = asRecord(tag.details);
  const modelInfo = asRecord(show.model_info);
  const architecture = modelInfo["general.architecture"];
  const contextLength = typeof architecture === "string" ? modelInfo[`${architecture}.context_length`] : undefined;
  const capabilities = asArray(show.capabilities).filter((c): c is string => typeof c === "string");
  const options: ModelOptions = definedOnly({
    family: typeof details.family === "string" ? details.family : undefined,
    parameter_size: typeof details.parameter_size === "string" ? details.parameter_size : undefined,
    modified_at: typeof tag.modified_at === "string" ? tag.modified_at : undefined,
    context_length_max: typeof contextLength === "number" ? contextLength : undefined,
    capabilities: capabilities.length > 0 ? capabilities : undefined,
  });
  return { provider: "local_server", model, options };
}
