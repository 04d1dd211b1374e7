import { loadConfig } from "../config/configFiles.ts";
import type { DataPaths } from "../config/paths.ts";
import { httpUrl } from "../config/schemas/common.ts";
import {
  type LlmRouterConfig,
  llmRouterSchema,
  PROVIDER_NAMES,
  type ProviderConfig,
  type ProviderName,
  type RouteProvider,
} from "../config/schemas/llmRouter.ts";
import { readSettingsOf } from "../config/settings.ts";
import { setYamlValue, updateYamlFile } from "../config/yamlDocument.ts";
import { LOCAL_SERVER_URL, vaultKeyFor } from "../setup/answers.ts";
import { AppError } from "../util/errors.ts";
import type { Vault } from "../vault/vault.ts";
import {
  editableRouterFile,
  ensureMapping,
  ensureRouterFile,
  listRoutes,
  parseRouteTarget,
  type SetRouteResult,
  setRoute,
} from "./routeEditor.ts";

// The providers of llm_router.yaml for `assistant config provider`: what each one is set to, and the two common
// setups (a local server, a cloud account). Secrets only ever go to the vault; the router file names them
// (vault://<name>) and listings say whether they are there, never what they are.

const BUILT_IN = ["assistant_embedded", "assistant_core"] as const;

/** The keys the environment may supply when the router file names none (docs/models.md#providers). */
const ENV_KEYS: Partial<Record<ProviderName, string>> = { cloud_a: "CLOUD_A_API_KEY", cloud_b: "CLOUD_B_API_KEY" };

export interface ProviderStatus {
  id: RouteProvider;
  /** Has settings in the router file or the environment; the built-in providers always do. */
  configured: boolean;
  /** The URL the daemon would call; null for the built-in providers and for a cloud provider's own default. */
  base_url: string | null;
  /** Where the key comes from and whether it is there: `vault://<name> present|missing`, `env <NAME> set|unset`, `none`. */
  key: string;
  /** The categories whose route (primary or fallback, defaults included) uses this provider. */
  used_by: string[];
}

export function listProviders(
  config: LlmRouterConfig,
  env: NodeJS.ProcessEnv,
  vault: Pick<Vault, "has">,
): ProviderStatus[] {
  const routes = listRoutes(config);
  const usedBy = (id: RouteProvider) =>
    routes
      .filter((route) => [route.primary, ...route.fallback].some((target) => target?.provider === id))
      .map((route) => route.category);
  const { localServerHost } = readSettingsOf(env, ["localServerHost"]);
  const configurable = PROVIDER_NAMES.map((id): ProviderStatus => {
    const settings = config.providers[id];
    const envKey = ENV_KEYS[id];
    const fromEnv = id === "local_server" ? localServerHost : envKey ? env[envKey] : undefined;
    return {
      id,
      configured: settings !== undefined || Boolean(fromEnv),
      base_url: settings?.base_url ?? (id === "local_server" ? (localServerHost ?? LOCAL_SERVER_URL) : null),
      key: keyStatus(settings?.api_key_ref ?? envKey, env, vault),
      used_by: usedBy(id),
    };
  });
  const builtIn = BUILT_IN.map(
    (id): ProviderStatus => ({ id, configured: true, base_url: null, key: "none", used_by: usedBy(id) }),
  );
  return [...configurable, ...builtIn];
}

function keyStatus(ref: string | undefined, env: NodeJS.ProcessEnv, vault: Pick<Vault, "has">): string {
  if (ref === undefined) return "none";
  if (ref.startsWith("vault://")) return `${ref} ${vault.has(ref.slice("vault://".length)) ? "present" : "missing"}`;
  return `env ${ref} ${env[ref] ? "set" : "unset"}`;
}

/** What a provider command changed. */
export interface ProviderChange {
  provider: ProviderName;
  file: string;
  base_url?: string;
  api_key_ref?: string;
  /** A key was given and stored in the vault (false: the vault already had one). */
  key_stored?: boolean;
  route?: SetRouteResult;
}

export interface RouteChoice {
  category?: string;
  model?: string;
}

/** `providers.local_server.base_url` (default http://localhost:11434), and optionally a category's route. */
export function setLocalServer(paths: DataPaths, options: RouteChoice & { url?: string }): ProviderChange {
  const url = (options.url ?? LOCAL_SERVER_URL).trim();
  const parsed = httpUrl.safeParse(url);
  if (!parsed.success) {
    const reason = parsed.error.issues[0]?.message ?? "expected an http:// or https:// URL";
    throw new AppError("invalid_request", `invalid local server URL: ${reason}`, { field: "url" });
  }
  const route = routeChoice("local_server", options);
  const file = prepareRouterFile(paths);
  setProviderField(file, "local_server", "base_url", url);
  return {
    provider: "local_server",
    file,
    base_url: url,
    ...(route ? { route: setRoute(file, route.category, "local_server", route.model) } : {}),
  };
}

export interface CloudOptions extends RouteChoice {
  /** Stored in the vault; without it the vault must already hold the provider's key. */
  apiKey?: string;
}

export function addCloudA(
  paths: DataPaths,
  vault: Pick<Vault, "has" | "set">,
  options: CloudOptions,
): Promise<ProviderChange> {
  return addCloud(paths, vault, "cloud_a", options);
}

export function addCloudB(
  paths: DataPaths,
  vault: Pick<Vault, "has" | "set">,
  options: CloudOptions,
): Promise<ProviderChange> {
  return addCloud(paths, vault, "cloud_b", options);
}

/** The key goes to the vault as `<provider>_api_key` and the router file refers to it as vault://<that name>. */
async function addCloud(
  paths: DataPaths,
  vault: Pick<Vault, "has" | "set">,
  provider: "cloud_a" | "cloud_b",
  options: CloudOptions,
): Promise<ProviderChange> {
  const keyName = vaultKeyFor(provider);
  const apiKey = options.apiKey?.trim();
  if (apiKey === "") throw new AppError("invalid_request", "the API key is empty", { field: "api_key" });
  const route = routeChoice(provider, options);
  if (apiKey === undefined && !vault.has(keyName)) {
    const command = `assistant config provider add-${provider.replace("_", "-")}`;
    throw new AppError(
      "invalid_request",
      `${provider} needs an API key and the vault has none (${keyName}): pipe it on standard input (\`${command} < key.txt\`), store it with \`assistant vault set ${keyName}\`, or pass --api-key (which may stay in your shell history)`,
      { field: "api_key" },
    );
  }
  const file = prepareRouterFile(paths); // an unusable router file stops the command before the key is stored
  if (apiKey !== undefined) await vault.set(keyName, apiKey);
  const ref = `vault://${keyName}`;
  setProviderField(file, provider, "api_key_ref", ref);
  return {
    provider,
    file,
    api_key_ref: ref,
    key_stored: apiKey !== undefined,
    ...(route ? { route: setRoute(file, route.category, provider, route.model) } : {}),
  };
}

/** A category and a model go together; both are checked before anything is written. */
function routeChoice(provider: ProviderName, options: RouteChoice): { category: string; model: string } | undefined {
  const { category, model } = options;
  if (category === undefined && model === undefined) return undefined;
  if (category === undefined) {
    throw new AppError("invalid_request", "a model needs a category to be used for (for example conversation)", {
      field: "category",
    });
  }
  if (model === undefined) {
    throw new AppError("invalid_request", `a category needs the model ${provider} should use for it`, {
      field: "model",
    });
  }
  return { category, model: parseRouteTarget(category, provider, model).model };
}

/** The router file to edit, checked to be valid first, and created from the default when missing. */
function prepareRouterFile(paths: DataPaths): string {
  loadConfig("llm_router", paths);
  const file = editableRouterFile(paths);
  ensureRouterFile(file);
  return file;
}

function setProviderField(file: string, provider: ProviderName, key: keyof ProviderConfig, value: string): void {
  updateYamlFile(
    file,
    (doc) => {
      ensureMapping(doc, ["providers", provider]);
      setYamlValue(doc, ["providers", provider, key], value);
    },
    llmRouterSchema,
  );
}
