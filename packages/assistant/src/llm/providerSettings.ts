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
import { LOCAL_SERVER_URL, LOWBIT_SERVER_URL, vaultKeyFor } from "../setup/answers.ts";
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
import { listed, type ServerProvider, type VerifiedServer, verifyModelServer } from "./serverCheck.ts";

// The providers of llm_router.yaml for `assistant config provider`: what each one is set to, and the two common
// setups (a local server, a cloud account). Secrets only ever go to the vault; the router file names them
// (vault://<name>) and listings say whether they are there, never what they are. A URL is saved only once the
// server there answers the provider's protocol and lists the model asked for (serverCheck.ts), unless told not to.

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
  /** What the server at the URL answered (absent when it was not asked: --no-probe, a cloud's own URL). */
  server?: VerifiedServer;
  route?: SetRouteResult;
}

export interface RouteChoice {
  category?: string;
  model?: string;
}

export interface ServerOptions extends RouteChoice {
  url?: string;
  /** false: save the URL without asking the server (one that is not running yet). Default true. */
  probe?: boolean;
  /** The probe's budget (default DEFAULT_PROBE_TIMEOUT_MS). */
  timeoutMs?: number;
}

/** `providers.local_server.base_url` (default http://localhost:11434): an Ollama-protocol server. */
export function setLocalServer(paths: DataPaths, options: ServerOptions): Promise<ProviderChange> {
  return setServer(paths, "local_server", LOCAL_SERVER_URL, options);
}

/** `providers.lowbit_server.base_url` (default http://localhost:8080/v1): any OpenAI-compatible server. */
export function setLowbitServer(paths: DataPaths, options: ServerOptions): Promise<ProviderChange> {
  return setServer(paths, "lowbit_server", LOWBIT_SERVER_URL, options);
}

/** A local server's URL, and optionally a category's route, once the server speaks the provider's protocol. */
async function setServer(
  paths: DataPaths,
  provider: "local_server" | "lowbit_server",
  defaultUrl: string,
  options: ServerOptions,
): Promise<ProviderChange> {
  const url = checkedUrl(options.url ?? defaultUrl, provider);
  const server = await probeServer(provider, url, options);
  const route = routeChoice(provider, options, server);
  const file = prepareRouterFile(paths);
  setProviderField(file, provider, "base_url", url);
  return {
    provider,
    file,
    base_url: url,
    ...(server ? { server } : {}),
    ...(route ? { route: setRoute(file, route.category, provider, route.model) } : {}),
  };
}

function checkedUrl(value: string, provider: ServerProvider): string {
  const url = value.trim();
  const parsed = httpUrl.safeParse(url);
  if (!parsed.success) {
    const reason = parsed.error.issues[0]?.message ?? "expected an http:// or https:// URL";
    const what = provider === "local_server" ? "local server" : provider;
    throw new AppError("invalid_request", `invalid ${what} URL: ${reason}`, { field: "url" });
  }
  return url;
}

function probeServer(
  provider: ServerProvider,
  url: string,
  options: ServerOptions,
  headers?: Record<string, string>,
): Promise<VerifiedServer | undefined> {
  if (options.probe === false) return Promise.resolve(undefined);
  return verifyModelServer(provider, url, {
    ...(options.model === undefined ? {} : { model: options.model }),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(headers ? { headers } : {}),
  });
}

export interface CloudOptions extends ServerOptions {
  /** Stored in the vault; without it the vault must already hold the provider's key. */
  apiKey?: string;
}

export function addCloudA(
  paths: DataPaths,
  vault: Pick<Vault, "has" | "get" | "set">,
  options: CloudOptions,
): Promise<ProviderChange> {
  return addCloud(paths, vault, "cloud_a", options);
}

export function addCloudB(
  paths: DataPaths,
  vault: Pick<Vault, "has" | "get" | "set">,
  options: CloudOptions,
): Promise<ProviderChange> {
  return addCloud(paths, vault, "cloud_b", options);
}

/**
 * The key goes to the vault as `<provider>_api_key` and the router file refers to it as vault://<that name>. With
 * a URL (an OpenAI-compatible endpoint other than the provider's own), the endpoint is asked with the key first.
 */
async function addCloud(
  paths: DataPaths,
  vault: Pick<Vault, "has" | "get" | "set">,
  provider: "cloud_a" | "cloud_b",
  options: CloudOptions,
): Promise<ProviderChange> {
  const keyName = vaultKeyFor(provider);
  const apiKey = options.apiKey?.trim();
  if (apiKey === "") throw new AppError("invalid_request", "the API key is empty", { field: "api_key" });
  const url = options.url === undefined ? undefined : checkedUrl(options.url, provider);
  if (url === undefined) routeChoice(provider, options); // without a server to ask, the route is checked first
  if (apiKey === undefined && !vault.has(keyName)) {
    const command = `assistant config provider add-${provider.replace("_", "-")}`;
    throw new AppError(
      "invalid_request",
      `${provider} needs an API key and the vault has none (${keyName}): pipe it on standard input (\`${command} < key.txt\`), store it with \`assistant vault set ${keyName}\`, or pass --api-key (which may stay in your shell history)`,
      { field: "api_key" },
    );
  }
  // A refused key or a wrong endpoint stops the command before the key is stored.
  const server = url
    ? await probeServer(provider, url, options, { authorization: `Bearer ${apiKey ?? vault.get(keyName)}` })
    : undefined;
  const route = routeChoice(provider, options, server);
  const file = prepareRouterFile(paths); // an unusable router file stops the command before the key is stored
  if (apiKey !== undefined) await vault.set(keyName, apiKey);
  const ref = `vault://${keyName}`;
  setProviderField(file, provider, "api_key_ref", ref);
  if (url) setProviderField(file, provider, "base_url", url);
  return {
    provider,
    file,
    api_key_ref: ref,
    key_stored: apiKey !== undefined,
    ...(url ? { base_url: url } : {}),
    ...(server ? { server } : {}),
    ...(route ? { route: setRoute(file, route.category, provider, route.model) } : {}),
  };
}

/**
 * A category and a model go together; both are checked before anything is written. When the server was asked,
 * a missing model is refused with the models it lists.
 */
function routeChoice(
  provider: ProviderName,
  options: RouteChoice,
  server?: VerifiedServer,
): { category: string; model: string } | undefined {
  const { category, model } = options;
  if (category === undefined && model === undefined) return undefined;
  if (category === undefined) {
    throw new AppError("invalid_request", "a model needs a category to be used for (for example conversation)", {
      field: "category",
    });
  }
  if (model === undefined) {
    const models = server ? `; ${listed(server.models, server.protocol)}` : "";
    throw new AppError(
      "invalid_request",
      `a category needs the model ${provider} should use for it (--model)${models}`,
      {
        field: "model",
      },
    );
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
