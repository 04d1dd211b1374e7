import { createOpenAI } from "@ai-sdk/openai";
import type { RouteConfig } from "../../config/schemas/llmRouter.ts";
import type { ModelInfo, Provider, ProviderFactory } from "../types.ts";
import {
  asRecord,
  commonCallOptions,
  definedOnly,
  listOpenAiModels,
  openAiBaseUrl,
  openAiEmbeddings,
  providerKey,
  requestJson,
  serverRoot,
  withRequestRewrite,
} from "./httpCommon.ts";

// lowbit_server: a llama.cpp server (llama-server) through its OpenAI-compatible API. The key is optional:
// llama-server only checks one when started with --api-key.

const DEFAULT_BASE_URL = "http://localhost:8080/v1";

export const createLlamaServerProvider: ProviderFactory = (context): Provider => {
  const baseURL = openAiBaseUrl(context.config.providers.lowbit_server?.base_url ?? DEFAULT_BASE_URL);
  const apiKey = () => providerKey(context, "lowbit_server", undefined);

  return {
    id: "lowbit_server",
    local: true,
    async languageModel(model) {
      const key = apiKey();
      return withRequestRewrite(
        // An empty string, not undefined: undefined makes the AI SDK read OPENAI_API_KEY from process.env.
        (fetch) => createOpenAI({ baseURL, apiKey: key ?? "", name: "lowbit_server", fetch }).chat(model),
        (request, options) => {
          if (key === undefined) request.headers.delete("authorization");
          // llama-server samples with these; the OpenAI chat model drops top_k and knows no repeat_penalty.
          const extra = definedOnly({
            top_k: options.topK,
            repeat_penalty: asRecord(options.providerOptions?.llamacpp).repeat_penalty,
          });
          if (Object.keys(extra).length > 0) Object.assign(request.body, extra);
        },
      );
    },
    callOptions(config: RouteConfig | undefined) {
      if (!config) return {};
      // num_ctx and num_gpu are llama-server start-up flags (-c, -ngl), not request fields.
      return {
        ...commonCallOptions(config),
        ...definedOnly({ topK: config.top_k }),
        ...(config.repeat_penalty === undefined
          ? {}
          : { providerOptions: { llamacpp: { repeat_penalty: config.repeat_penalty } } }),
      };
    },
    async embed(model, texts, signal) {
      const key = apiKey();
      return openAiEmbeddings(
        "lowbit_server",
        baseURL,
        key ? { authorization: `Bearer ${key}` } : {},
        model,
        texts,
        signal,
      );
    },
    async listModels(signal) {
      const key = apiKey();
      const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
      const [models, numCtx] = await Promise.all([
        listOpenAiModels("lowbit_server", baseURL, headers, signal, (entry) =>
          definedOnly({ context_length_max: trainedContext(entry) }),
        ),
        serverContext(baseURL, headers, signal),
      ]);
      return models.map((info): ModelInfo => ({ ...info, options: definedOnly({ ...info.options, num_ctx: numCtx }) }));
    },
  };
};

/** llama-server lists the GGUF's training context as meta.n_ctx_train. */
function trainedContext(entry: Record<string, unknown>): number | undefined {
  const value = asRecord(entry.meta).n_ctx_train;
  return typeof value === "number" ? value : undefined;
}

/** The context size the server runs with (GET /props at the server root); optional, older servers lack it. */
async function serverContext(
  baseURL: string,
  headers: Record<string, string>,
  signal: AbortSignal | undefined,
): Promise<number | undefined> {
  try {
    const props = asRecord(await requestJson("lowbit_server", `${serverRoot(baseURL)}/props`, { headers, signal }));
    const nCtx = asRecord(props.default_generation_settings).n_ctx;
    return typeof nCtx === "number" ? nCtx : undefined;
  } catch (error) {
    if (signal?.aborted) throw error;
    return undefined;
  }
}
