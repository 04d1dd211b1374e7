// The provider ids of llm_router.yaml, in a module of their own so what only needs the names (the environment
// settings registry, read by every CLI command) does not load the zod schemas of the router file.

/** Names allowed under `providers`. */
export const PROVIDER_NAMES = ["local_server", "cloud_a", "cloud_azure", "cloud_b", "lowbit_server"] as const;
/** Provider ids allowed in a route entry: the configurable providers plus the two built-in ones. */
export const ROUTE_PROVIDERS = ["assistant_embedded", "assistant_core", ...PROVIDER_NAMES] as const;

export type ProviderName = (typeof PROVIDER_NAMES)[number];
export type RouteProvider = (typeof ROUTE_PROVIDERS)[number];
