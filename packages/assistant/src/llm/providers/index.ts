import type { RouteProvider } from "../../config/schemas/llmRouter.ts";
import type { Provider, ProviderContext, ProviderFactory } from "../types.ts";

// The provider registry. Each provider module is imported on first use, so a daemon that only talks to the
// embedded model never loads the HTTP SDKs (and the reverse). Nothing is cached here: the router caches.

const FACTORIES: Record<RouteProvider, () => Promise<ProviderFactory>> = {
  assistant_embedded: () => import("./embedded.ts").then((m) => m.createEmbeddedProvider),
  assistant_core: () => import("./core.ts").then((m) => m.createCoreProvider),
  local_server: () => import("./localServer.ts").then((m) => m.createLocalServerProvider),
  cloud_a: () => import("./cloudA.ts").then((m) => m.createCloudAProvider),
  cloud_azure: () => import("./cloudAzure.ts").then((m) => m.createCloudAzureProvider),
  cloud_b: () => import("./cloudB.ts").then((m) => m.createCloudBProvider),
  lowbit_server: () => import("./lowbitServer.ts").then((m) => m.createLowbitServerProvider),
};

export async function loadProvider(id: RouteProvider, context: ProviderContext): Promise<Provider> {
  const factory = await FACTORIES[id]();
  return factory(context);
}
