import { readSettingsOf } from "../config/settings.ts";
import { asArray, asRecord, openAiBaseUrl, requestJson, serverRoot } from "./providers/httpCommon.ts";

// Finds model servers on this machine: Ollama (local_server) and llama.cpp's llama-server (lowbit_server).
// Every candidate is probed in parallel under one short timeout, so a missing server costs at most that.

export type LocalServerKind = "local_server" | "lowbit_server";

export interface DiscoveryCandidate {
  provider: LocalServerKind;
  /** Root or OpenAI-style URL; the result reports the value to put in the router file. */
  base_url: string;
}

export interface DiscoveredServer {
  provider: LocalServerKind;
  /** Ollama: the root URL; llama-server: the OpenAI-style URL ending in /v1. */
  base_url: string;
  reachable: boolean;
  version?: string;
  models: string[];
  error?: string;
}

export interface DiscoverOptions {
  /** Per-candidate budget (default 800 ms). */
  timeoutMs?: number;
  /** Replaces the default candidates (LOCAL_SERVER_HOST, 127.0.0.1:11434, 127.0.0.1:8080). */
  candidates?: DiscoveryCandidate[];
}

const DEFAULT_TIMEOUT_MS = 800;

export function defaultCandidates(env: NodeJS.ProcessEnv): DiscoveryCandidate[] {
  const candidates: DiscoveryCandidate[] = [];
  const host = readSettingsOf(env, ["localServerHost"]).localServerHost;
  if (host) candidates.push({ provider: "local_server", base_url: host });
  candidates.push(
    { provider: "local_server", base_url: "http://127.0.0.1:11434" },
    { provider: "lowbit_server", base_url: "http://127.0.0.1:8080" },
  );
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
    candidates.map((candidate) => {
      const signal = AbortSignal.timeout(timeoutMs);
      return candidate.provider === "local_server"
        ? probeOllama(serverRoot(candidate.base_url), signal, timeoutMs)
        : probeLlamaServer(serverRoot(candidate.base_url), signal, timeoutMs);
    }),
  );
}

async function probeOllama(root: string, signal: AbortSignal, timeoutMs: number): Promise<DiscoveredServer> {
  const result: DiscoveredServer = { provider: "local_server", base_url: root, reachable: false, models: [] };
  try {
    const [version, tags] = await Promise.all([
      requestJson("local_server", `${root}/api/version`, { signal }),
      requestJson("local_server", `${root}/api/tags`, { signal }),
    ]);
    const versionText = asRecord(version).version;
    return {
      ...result,
      reachable: true,
      ...(typeof versionText === "string" ? { version: versionText } : {}),
      models: modelNames(asRecord(tags).models, "name"),
    };
  } catch (error) {
    return { ...result, error: probeError(error, signal, timeoutMs) };
  }
}

/** llama-server answers /health (503 while loading) and /v1/models; either one answering proves it is there. */
async function probeLlamaServer(root: string, signal: AbortSignal, timeoutMs: number): Promise<DiscoveredServer> {
  const result: DiscoveredServer = {
    provider: "lowbit_server",
    base_url: openAiBaseUrl(root),
    reachable: false,
    models: [],
  };
  const [health, models] = await Promise.allSettled([
    requestJson("lowbit_server", `${root}/health`, { signal }),
    requestJson("lowbit_server", `${root}/v1/models`, { signal }),
  ]);
  if (models.status === "fulfilled") {
    return { ...result, reachable: true, models: modelNames(asRecord(models.value).data, "id") };
  }
  if (health.status === "fulfilled") return { ...result, reachable: true };
  return { ...result, error: probeError(health.reason, signal, timeoutMs) };
}

function modelNames(list: unknown, field: string): string[] {
  return asArray(list).flatMap((entry) => {
    const name = asRecord(entry)[field];
    return typeof name === "string" ? [name] : [];
  });
}

function probeError(error: unknown, signal: AbortSignal, timeoutMs: number): string {
  if (signal.aborted) return `no answer within ${timeoutMs} ms`;
  return error instanceof Error ? error.message : String(error);
}
