import { AppError } from "../util/errors.ts";
import { type ProbeOptions, probeModelServer, type ServerProbe, type ServerProtocol } from "./serverProbe.ts";

// Before a command saves a server URL for a provider: the server must answer the protocol that provider speaks
// and list the model it is asked to use. Every refusal is one sentence saying what was found and what to run
// instead, so a person never saves a URL that fails at the first chat.

export type ServerProvider = "local_server" | "lowbit_server" | "cloud_a" | "cloud_b";

export interface VerifyOptions extends ProbeOptions {
  /** The model the route will ask for; it must be one the server lists. */
  model?: string;
  /** What to do instead when the server speaks the other local protocol (default: the config provider command). */
  instead?: (provider: "local_server" | "lowbit_server", url: string) => string;
}

export interface VerifiedServer {
  protocol: ServerProtocol;
  models: string[];
  /** Ollama's version. */
  version?: string;
}

const SHOWN_MODELS = 20;

export function protocolOf(provider: ServerProvider): ServerProtocol {
  return provider === "local_server" ? "ollama" : "openai";
}

/** The command that points a local provider at a URL. */
export function setServerCommand(provider: "local_server" | "lowbit_server", url: string): string {
  return `assistant config provider ${provider === "local_server" ? "set-local-server" : "set-lowbit-server"} --url ${url}`;
}

export async function verifyModelServer(
  provider: ServerProvider,
  url: string,
  options: VerifyOptions = {},
): Promise<VerifiedServer> {
  const probe = await probeModelServer(url, options);
  const protocol = protocolOf(provider);
  if (!probe.protocols.includes(protocol)) throw refusal(provider, url, probe, options);
  const models = probe.models[protocol] ?? [];
  if (options.model !== undefined && !hasModel(models, options.model)) {
    throw new AppError("invalid_request", `${url} has no model "${options.model}"; ${listed(models, protocol)}`, {
      field: "model",
      models,
    });
  }
  return { protocol, models, ...(probe.version ? { version: probe.version } : {}) };
}

/** Ollama takes a name without a tag as `:latest`. */
export function hasModel(models: string[], model: string): boolean {
  return models.includes(model) || (!model.includes(":") && models.includes(`${model}:latest`));
}

/** "it lists a, b" in words, short for servers (OpenRouter) that list hundreds. */
export function listed(models: string[], protocol: ServerProtocol): string {
  if (models.length === 0) {
    return protocol === "ollama"
      ? "it lists no models: pull one first (`ollama pull llama3.2`)"
      : "it lists no models: load one in the server first";
  }
  const shown = models.slice(0, SHOWN_MODELS).join(", ");
  const more = models.length > SHOWN_MODELS ? ` and ${models.length - SHOWN_MODELS} more` : "";
  return `it lists ${models.length === 1 ? "one model" : `${models.length} models`}: ${shown}${more}`;
}

function refusal(provider: ServerProvider, url: string, probe: ServerProbe, options: VerifyOptions): AppError {
  const instead = options.instead ?? ((kind, target) => `use \`${setServerCommand(kind, target)}\``);
  const details = { field: "url", protocols: probe.protocols };
  if (!probe.answered) {
    const reason = probe.failures[protocolOf(provider)] ?? "no answer";
    return new AppError(
      "provider_unavailable",
      `cannot reach ${url} (${reason}): start the server or check the URL (--no-probe saves it without checking)`,
      details,
    );
  }
  if (provider === "local_server" && probe.protocols.includes("openai")) {
    return new AppError(
      "invalid_request",
      `${url} is an OpenAI-compatible server (GET ${probe.openai_base}/models answers), not an Ollama one (${probe.failures.ollama}), and local_server speaks Ollama's API: ${instead("lowbit_server", probe.openai_base)}`,
      details,
    );
  }
  if (provider !== "local_server" && probe.protocols.includes("ollama")) {
    return new AppError(
      "invalid_request",
      `${url} is an Ollama server (GET ${probe.root}/api/tags answers) without the OpenAI API (${probe.failures.openai}), which ${provider} speaks: ${instead("local_server", probe.root)}`,
      details,
    );
  }
  if (provider !== "local_server" && (probe.openai_status === 401 || probe.openai_status === 403)) {
    return new AppError(
      "invalid_request",
      `${url} refused the API key (${probe.failures.openai}): check the key, or store the right one with \`assistant vault set ${provider}_api_key\``,
      details,
    );
  }
  return new AppError(
    "invalid_request",
    `${url} answers HTTP but is not a model server: ${[probe.failures.ollama, probe.failures.openai].join("; ")}`,
    details,
  );
}
