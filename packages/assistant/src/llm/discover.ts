import type { LlmRouterConfig } from "../config/schemas/llmRouter.ts";
import { readSettingsOf } from "../config/settings.ts";
import { openAiBaseUrl, serverRoot } from "./providers/httpCommon.ts";
import { setServerCommand } from "./serverCheck.ts";
import { probeModelServer, type ServerProbe } from "./serverProbe.ts";

// Finds model servers: the URLs the router file already names, LOCAL_SERVER_HOST, URLs given on the command line
// and the usual local ports (Ollama 11434, llama-server 8080, LM Studio 1234, vLLM 8000). Each is asked both
// protocols (serverProbe.ts), so what a server is comes from what it answers, not from its port: an Ollama
// server is reported as local_server, any other OpenAI-compatible one as lowbit_server, each with the command
// that makes it answer chats. Every candidate is probed in parallel under one short timeout.

export type LocalServerKind = "local_server" | "lowbit_server";

/** Where a candidate URL came from. */
export type CandidateSource = "--url" | "llm_router.yaml" | "LOCAL_SERVER_HOST" | "default port";

export interface DiscoveryCandidate {
  /** What a server at this URL is expected to be; what answers decides. */
  provider: LocalServerKind;
  /** Root or OpenAI-style URL; the result reports the value to put in the router file. */
  base_url: string;
  source: CandidateSource;
}

export interface DiscoveredServer {
  /** The provider that speaks what the server answers (the expected one when nothing answered). */
  provider: LocalServerKind;
  /** Ollama: the root URL; OpenAI-compatible: the URL ending in /v1. */
  base_url: string;
  source: CandidateSource;
  /** A model server answered there. */
  reachable: boolean;
  version?: string;
  models: string[];
  error?: string;
  /** The command that makes this server answer chats ("use this server"); only for reachable ones. */
  use?: string;
}

export interface DiscoverOptions {
  /** Per-candidate budget (default 800 ms). */
  timeoutMs?: number;
  /** Replaces the default candidates. */
  candidates?: DiscoveryCandidate[];
}

const DEFAULT_TIMEOUT_MS = 800;

const USUAL_PORTS: DiscoveryCandidate[] = [
  { provider: "local_server", base_url: "http://127.0.0.1:11434", source: "default port" }, // Ollama
  { provider: "lowbit_server", base_url: "http://127.0.0.1:8080/v1", source: "default port" }, // llama-server
  { provider: "lowbit_server", base_url: "http://127.0.0.1:1234/v1", source: "default port" }, // LM Studio
  { provider: "lowbit_server", base_url: "http://127.0.0.1:8000/v1", source: "default port" }, // vLLM
];

/** URLs given on the command line first, then the router file's, LOCAL_SERVER_HOST and the usual ports, each once. */
export function defaultCandidates(
  env: NodeJS.ProcessEnv,
  config?: Pick<LlmRouterConfig, "providers">,
  urls: string[] = [],
): DiscoveryCandidate[] {
  const candidates: DiscoveryCandidate[] = urls.map((url) => ({
    provider: "lowbit_server",
    base_url: url,
    source: "--url",
  }));
  for (const provider of ["local_server", "lowbit_server"] as const) {
    const url = config?.providers[provider]?.base_url;
    if (url) candidates.push({ provider, base_url: url, source: "llm_router.yaml" });
  }
  const host = readSettingsOf(env, ["localServerHost"]).localServerHost;
  if (host) candidates.push({ provider: "local_server", base_url: host, source: "LOCAL_SERVER_HOST" });
  candidates.push(...USUAL_PORTS);
  const seen = new Set<string>();
  return candidates.filter((c) => {
    const key = serverRoot(c.base_url);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

export async function discoverLocalServers(
  env: NodeJS.ProcessEnv,
  options: DiscoverOptions = {},
): Promise<DiscoveredServer[]> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const candidates = options.candidates ?? defaultCandidates(env);
  return Promise.all(
    candidates.map(async (candidate) => found(candidate, await probeModelServer(candidate.base_url, { timeoutMs }))),
  );
}

function found(candidate: DiscoveryCandidate, probe: ServerProbe): DiscoveredServer {
  // Ollama also answers the OpenAI API; its own API is the better one to use.
  if (probe.protocols.includes("ollama")) {
    return described("local_server", probe.root, candidate, probe.models.ollama ?? [], probe.version);
  }
  if (probe.protocols.includes("openai")) {
    return described("lowbit_server", openAiBaseUrl(candidate.base_url), candidate, probe.models.openai ?? []);
  }
  const expected = candidate.provider === "local_server" ? probe.root : openAiBaseUrl(candidate.base_url);
  const error = probe.answered
    ? `answers HTTP but is not a model server (${probe.failures.ollama}; ${probe.failures.openai})`
    : (probe.failures[candidate.provider === "local_server" ? "ollama" : "openai"] ?? "no answer");
  return {
    provider: candidate.provider,
    base_url: expected,
    source: candidate.source,
    reachable: false,
    models: [],
    error,
  };
}

function described(
  provider: LocalServerKind,
  baseUrl: string,
  candidate: DiscoveryCandidate,
  models: string[],
  version?: string,
): DiscoveredServer {
  const route = models[0] ? ` --category conversation --model ${shellWord(models[0])}` : "";
  return {
    provider,
    base_url: baseUrl,
    source: candidate.source,
    reachable: true,
    ...(version ? { version } : {}),
    models,
    use: `${setServerCommand(provider, baseUrl)}${route}`,
  };
}

/** Model names are usually plain (llama3.2:3b, org/model); anything else is quoted so the command copies as is. */
function shellWord(text: string): string {
  return /^[\w.:/@+=-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}
