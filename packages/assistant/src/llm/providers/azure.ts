import { createAzure } from "@ai-sdk/azure";
import { ProviderFailure } from "../errors.ts";
import type { ModelInfo, Provider, ProviderFactory } from "../types.ts";
import { commonCallOptions, requireKey } from "./httpCommon.ts";

// cloud_azure: Azure OpenAI. `base_url` is the resource endpoint, a route's `model` the deployment name and
// `version` the api-version, so requests go to
// {base_url}/openai/deployments/{deployment}/chat/completions?api-version={version}.

/** Latest GA data-plane api-version when the router file names none. */
export const DEFAULT_AZURE_API_VERSION = "2024-10-21";
const HOW_TO_SET_KEY =
  "store it with `assistant vault set cloud_azure_api_key` and set providers.cloud_azure.api_key_ref to " +
  "vault://cloud_azure_api_key";

export const createAzureProvider: ProviderFactory = (context): Provider => {
  const settings = context.config.providers.cloud_azure ?? {};

  /** The resource endpoint; users may paste it with or without the /openai suffix. */
  const endpoint = () => {
    if (!settings.base_url) {
      throw new ProviderFailure(
        "unavailable",
        "cloud_azure has no base_url: set providers.cloud_azure.base_url to the resource endpoint (https://<resource>.openai.azure.com)",
      );
    }
    return settings.base_url.replace(/\/+$/, "").replace(/\/openai$/, "");
  };

  return {
    id: "cloud_azure",
    local: false,
    async languageModel(deployment) {
      const baseURL = `${endpoint()}/openai`;
      const apiKey = requireKey(context, "cloud_azure", undefined, HOW_TO_SET_KEY);
      return createAzure({
        baseURL,
        apiKey,
        apiVersion: settings.version ?? DEFAULT_AZURE_API_VERSION,
        // The classic deployment URLs work with every resource; the /openai/v1 API needs a newer resource setup.
        useDeploymentBasedUrls: true,
      }).chat(deployment);
    },
    callOptions: commonCallOptions,
    // Listing deployments needs the management API (Entra credentials), not the resource key: report the
    // deployments the routes name.
    async listModels() {
      const deployments = new Set<string>();
      for (const route of Object.values(context.config.task_types)) {
        for (const target of [route.primary, ...route.fallback]) {
          if (target.provider === "cloud_azure") deployments.add(target.model);
        }
      }
      return [...deployments].map((model): ModelInfo => ({ provider: "cloud_azure", model, options: {} }));
    },
  };
};
