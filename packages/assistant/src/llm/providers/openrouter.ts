import { createOpenRouter } from "@openrouter/ai-sdk-provider";
import type { ModelOptions, RouteConfig } from "../../config/schemas/llmRouter.ts";
import type { Provider, ProviderFactory } from "../types.ts";
import {
  asRecord,
  commonCallOptions,
  definedOnly,
  listOpenAiModels,
  openAiBaseUrl,
  openAiEmbeddings,
  providerKey,
  requireKey,
} from "./httpCommon.ts";

// cloud_b: OpenRouter. Attribution headers come from the router file or CLOUD_B_SITE_URL / CLOUD_B_APP_TITLE.

const DEFAULT_BASE_URL = "https://openrouter.ai/api/v1";
const HOW_TO_SET_KEY =
  "run `assistant config provider add-cloud-b`, or store it with `assistant vault set cloud_b_api_key` and set " +
  "providers.cloud_b.api_key_ref to vault://cloud_b_api_key, or set CLOUD_B_API_KEY";
/** OpenRouter's reasoning efforts; it has no "max", so that maps to its highest. */
const OPENROUTER_EFFORTS = new Set(["none", "minimal", "low", "medium", "high", "xhigh"]);

export const createOpenRouterProvider: ProviderFactory = (context): Provider => {
  const settings = context.config.providers.cloud_b ?? {};
  const baseURL = openAiBaseUrl(settings.base_url ?? DEFAULT_BASE_URL);
  const siteUrl = settings.site_url ?? context.settings.cloudBSiteUrl;
  const appTitle = settings.app_title ?? context.settings.cloudBAppTitle;
  // The library sends X-OpenRouter-Title for appName; X-Title is the header OpenRouter documents for attribution.
  const headers: Record<string, string> = appTitle ? { "X-Title": appTitle } : {};

  return {
    id: "cloud_b",
    local: false,
    async languageModel(model) {
      const apiKey = requireKey(context, "cloud_b", "CLOUD_B_API_KEY", HOW_TO_SET_KEY);
      return createOpenRouter({
        baseURL,
        apiKey,
        appUrl: siteUrl,
        appName: appTitle,
        headers,
        // The default "compatible" mode omits stream_options, so streams would end without token usage.
        compatibility: "strict",
      }).chat(model);
    },
    callOptions(config: RouteConfig | undefined) {
      if (!config) return {};
      const level = config.thinking_level === "max" ? "xhigh" : config.thinking_level;
      // OpenRouter spreads providerOptions.openrouter into the request body; it ignores the AI SDK `reasoning`.
      const openrouter = definedOnly({
        repetition_penalty: config.repeat_penalty,
        reasoning: level && OPENROUTER_EFFORTS.has(level) ? { effort: level } : undefined,
      });
      return {
        ...commonCallOptions(config),
        ...definedOnly({ topK: config.top_k }),
        ...(Object.keys(openrouter).length > 0 ? { providerOptions: { openrouter } } : {}),
      };
    },
    // The model list is public; the key is sent when there is one.
    async listModels(signal) {
      const apiKey = providerKey(context, "cloud_b", "CLOUD_B_API_KEY");
      const auth: Record<string, string> = apiKey ? { authorization: `Bearer ${apiKey}` } : {};
      return listOpenAiModels("cloud_b", baseURL, auth, signal, openRouterOptions);
    },
    async embed(model, texts, signal) {
      const apiKey = requireKey(context, "cloud_b", "CLOUD_B_API_KEY", HOW_TO_SET_KEY);
      return openAiEmbeddings(
        "cloud_b",
        baseURL,
        { ...headers, authorization: `Bearer ${apiKey}` },
        model,
        texts,
        signal,
      );
    },
  };
};

/** context_length and per-token USD prices (strings in OpenRouter's list) as model options. */
function openRouterOptions(entry: Record<string, unknown>): ModelOptions {
  const pricing = asRecord(entry.pricing);
  const prices = definedOnly({ prompt: usd(pricing.prompt), completion: usd(pricing.completion) });
  return definedOnly({
    context_length_max: typeof entry.context_length === "number" ? entry.context_length : undefined,
    extra: Object.keys(prices).length > 0 ? { pricing: prices } : undefined,
  });
}

function usd(value: unknown): number | undefined {
  const n = typeof value === "string" || typeof value === "number" ? Number(value) : Number.NaN;
  return Number.isFinite(n) ? n : undefined;
}
