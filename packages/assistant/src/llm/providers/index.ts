import type { RouteProvider } from "../../config/schemas/llmRouter.ts";
import type { Provider, ProviderContext, ProviderFactory } from "../types.ts";

// The provider registry. Each provider module is imported on first use, so a daemon that only talks to the
// embedded model never loads the HTTP SDKs (and the reverse). Nothing is cached here: the router caches.

const FACTORIES: Record<RouteProvider, () => Promise<ProviderFactory>> = {
  assistant_embedded: () => import("./embedded.ts").then((m) => m.createEmbeddedProvider),
  assistant_core: () => import("./core.ts").then((m) => m.createCoreProvider),
  local_server: () => import("./ollama.ts").then((m) => m.createOllamaProvider),
  cloud_a: () => import("./openai.ts").then((m) => m.createOpenAiProvider),
  cloud_azure: () => import("./azure.ts").then((m) => m.createAzureProvider),
  cloud_b: () => import("./openrouter.ts").then((m) => m.createOpenRouterProvider),
  lowbit_server: () => import("./llamaServer.ts").then((m) => m.createLlamaServerProvider),
};

export async function loadProvider(id: RouteProvider, context: ProviderContext): Promise<Provider> {
  const factory = await FACTORIES[id]();
  return factory(context);
}
