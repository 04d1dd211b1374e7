import { asArray, asRecord, networkCause, openAiBaseUrl, serverRoot } from "./providers/httpCommon.ts";

// What a model server at a URL speaks, asked the way the providers will call it: Ollama's native API (GET
// <root>/api/tags, the local_server provider) and the OpenAI API (GET <base>/models, lowbit_server and the cloud
// providers; llama-server's GET /health counts too while /v1/models answers 503, waiting for the model to load).
// Real Ollama answers both. Every path is asked in parallel under one timeout, so a probe costs at most that.

export type ServerProtocol = "ollama" | "openai";

export interface ServerProbe {
  /** The server's root URL, where Ollama's /api lives. */
  root: string;
  /** The OpenAI-style base URL (ending in /v1 or the configured path), where /models lives. */
  openai_base: string;
  /** Something answered HTTP at this address (a model server or not). */
  answered: boolean;
  /** The protocols that answered, Ollama first. */
  protocols: ServerProtocol[];
  /** The models each protocol lists. */
  models: Partial<Record<ServerProtocol, string[]>>;
  /** Ollama's version (GET /api/version), when it gives one. */
  version?: string;
  /** Why a protocol did not answer, in words: `GET http://…/api/tags answered HTTP 404`, `ECONNREFUSED`… */
  failures: Partial<Record<ServerProtocol, string>>;
  /** The HTTP status of a failed OpenAI model list (401 and 403: the key was refused). */
  openai_status?: number;
}

export interface ProbeOptions {
  /** The whole probe's budget (default 3000 ms). */
  timeoutMs?: number;
  /** Headers for the OpenAI model list only (a cloud key); the other paths are asked without them. */
  headers?: Record<string, string>;
}

export const DEFAULT_PROBE_TIMEOUT_MS = 3000;

type Outcome =
  | { ok: true; body: unknown }
  | { ok: false; answered: boolean; status?: number; reason: string; body?: undefined };

export async function probeModelServer(url: string, options: ProbeOptions = {}): Promise<ServerProbe> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS;
  const signal = AbortSignal.timeout(timeoutMs);
  const root = serverRoot(url);
  const openaiBase = openAiBaseUrl(url);
  const get = (target: string, headers?: Record<string, string>) => getJson(target, signal, timeoutMs, headers);
  const [tags, version, models, health] = await Promise.all([
    get(`${root}/api/tags`),
    get(`${root}/api/version`),
    get(`${openaiBase}/models`, options.headers),
    get(`${root}/health`),
  ]);

  const probe: ServerProbe = {
    root,
    openai_base: openaiBase,
    answered: [tags, version, models, health].some((outcome) => outcome.ok || outcome.answered),
    protocols: [],
    models: {},
    failures: {},
  };
  const ollamaModels = asRecord(tags.body).models;
  if (tags.ok && Array.isArray(ollamaModels)) {
    probe.protocols.push("ollama");
    probe.models.ollama = names(ollamaModels, "name");
    const text = asRecord(version.body).version;
    if (typeof text === "string") probe.version = text;
  } else probe.failures.ollama = tags.ok ? `GET ${root}/api/tags did not answer a model list` : tags.reason;

  const openaiModels = asRecord(models.body).data;
  if (models.ok && Array.isArray(openaiModels)) {
    probe.protocols.push("openai");
    probe.models.openai = names(openaiModels, "id");
  } else if (!models.ok && models.status === 503 && health.ok && typeof asRecord(health.body).status === "string") {
    probe.protocols.push("openai"); // llama-server loading its model: the list comes once it is loaded
    probe.models.openai = [];
  } else {
    probe.failures.openai = models.ok ? `GET ${openaiBase}/models did not answer a model list` : models.reason;
    if (!models.ok && models.status !== undefined) probe.openai_status = models.status;
  }
  return probe;
}

async function getJson(
  url: string,
  signal: AbortSignal,
  timeoutMs: number,
  headers: Record<string, string> = {},
): Promise<Outcome> {
  let response: Response;
  try {
    response = await fetch(url, { headers: { accept: "application/json", ...headers }, signal });
  } catch (error) {
    const reason = signal.aborted ? `no answer within ${timeoutMs} ms` : networkCause(error);
    return { ok: false, answered: false, reason };
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => {});
    return {
      ok: false,
      answered: true,
      status: response.status,
      reason: `GET ${url} answered HTTP ${response.status}`,
    };
  }
  try {
    return { ok: true, body: await response.json() };
  } catch {
    return { ok: false, answered: true, reason: `GET ${url} did not answer JSON` };
  }
}

function names(list: unknown[], field: string): string[] {
  return asArray(list).flatMap((entry) => {
    const name = asRecord(entry)[field];
    return typeof name === "string" ? [name] : [];
  });
}
