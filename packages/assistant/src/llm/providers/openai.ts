import { createOpenAI } from "@ai-sdk/openai";
import type { Provider, ProviderFactory } from "../types.ts";
import { commonCallOptions, listOpenAiModels, openAiBaseUrl, openAiEmbeddings, requireKey } from "./httpCommon.ts";
import { httpFetch } from "./httpFetch.ts";

// cloud_a: OpenAI through its chat completions API (the API every OpenAI-compatible server shares).

const DEFAULT_BASE_URL = "https://api.openai.com/v1";
const HOW_TO_SET_KEY =
  "run `assistant config provider add-cloud-a`, or store it with `assistant vault set cloud_a_api_key` and set " +
  "providers.cloud_a.api_key_ref to vault://cloud_a_api_key, or set CLOUD_A_API_KEY";

export const createOpenAiProvider: ProviderFactory = (context): Provider => {
  const settings = context.config.providers.cloud_a ?? {};
  // Always explicit: left undefined, the AI SDK would read OPENAI_BASE_URL from process.env.
  const baseURL = openAiBaseUrl(settings.base_url ?? DEFAULT_BASE_URL);
  const apiKey = () => requireKey(context, "cloud_a", "CLOUD_A_API_KEY", HOW_TO_SET_KEY);
  const headers = () => {
    const list: Record<string, string> = { authorization: `Bearer ${apiKey()}` };
    if (settings.organization) list["openai-organization"] = settings.organization;
    return list;
  };

  return {
    id: "cloud_a",
    local: false,
    async languageModel(model) {
      // httpFetch: a server on plain http:// (a local vLLM or LM Studio given as cloud_a) over node:http.
      return createOpenAI({ baseURL, apiKey: apiKey(), organization: settings.organization, fetch: httpFetch }).chat(
        model,
      );
    },
    // OpenAI has no top_k and no llama.cpp/Ollama extras.
    callOptions: commonCallOptions,
    async listModels(signal) {
      return listOpenAiModels("cloud_a", baseURL, headers(), signal);
    },
    async embed(model, texts, signal) {
      return openAiEmbeddings("cloud_a", baseURL, headers(), model, texts, signal);
    },
  };
};
