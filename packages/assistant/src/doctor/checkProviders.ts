import { existsSync } from "node:fs";
import { configFilePath, loadConfig } from "../config/configFiles.ts";
import type { LlmRouterConfig, RouteProvider } from "../config/schemas/llmRouter.ts";
import { readSettingsOf } from "../config/settings.ts";
import { resolveEmbeddedModel } from "../llm/embedded/catalogue.ts";
import { ModelDownloader } from "../llm/embedded/download.ts";
import { createEmbeddedRuntime, ggufProblem } from "../llm/embedded/runtime.ts";
import { ProviderFailure } from "../llm/errors.ts";
import { RouterMetrics } from "../llm/metrics.ts";
import { routerFromFile } from "../llm/services.ts";
import { EMBEDDED_MODEL_SETTINGS, LLM_SETTINGS } from "../llm/settings.ts";
import { ConfigError } from "../util/errors.ts";
import { readConfigText } from "../util/fileText.ts";
import { openVault } from "../vault/vault.ts";
import { type CheckContext, type CheckResult, result } from "./types.ts";

// Every provider a route of llm_router.yaml names, asked whether it can answer (docs/cli.md#doctor): reachable, speaking
// the protocol its provider id expects, and offering the model the route asks for. One models-list call per
// provider, all in parallel under one short deadline, so a dead server costs at most PROBE_TIMEOUT_MS. A cloud
// provider is called only when its key is configured, and only for its model list (no tokens are billed); Azure
// lists deployments only through its management API, so it is not called at all. Then `router.conversation` says
// whether the default route has a model that can answer: doctor stays green only when it has.

export const PROBE_TIMEOUT_MS = 2_500;

const CORE = "assistant_core";
const EMBEDDED = "assistant_embedded";
/** Called only with a key, and only for their model list. */
const CLOUD = new Set<RouteProvider>(["cloud_a", "cloud_azure", "cloud_b"]);

interface Usage {
  models: Set<string>;
  routes: Set<string>;
}

interface Probe {
  /** Whether each model the routes name can answer. */
  answers: Map<string, boolean>;
  /** Why not, for the summary. */
  problem?: string;
  /** What doctor reports for this provider (the embedded model has its own checks: none here). */
  check?: CheckResult;
}

export async function checkProviders(ctx: CheckContext): Promise<CheckResult[]> {
  const options = ctx.projectRoot ? { projectRoot: ctx.projectRoot } : {};
  let config: LlmRouterConfig;
  try {
    if (readConfigText(configFilePath("llm_router", ctx.paths, options)) === undefined) return [];
    config = loadConfig("llm_router", ctx.paths, options);
  } catch (error) {
    if (error instanceof ConfigError) return []; // the config check reports it
    throw error;
  }
  const usage = providersOfRoutes(config);
  const settings = readSettingsOf(ctx.env, LLM_SETTINGS);
  const router = routerFromFile(
    { paths: ctx.paths, env: ctx.env, settings, vault: openVault(ctx.paths, ctx.env) },
    {
      // Never loads or downloads here: only the provider objects are built.
      embedded: createEmbeddedRuntime({ settings, paths: ctx.paths, downloader: new ModelDownloader() }),
      metrics: new RouterMetrics(false),
    },
  );
  const probes = new Map<RouteProvider, Probe>();
  await Promise.all(
    [...usage].map(async ([id, use]) => {
      if (id === CORE) return;
      const probe = id === EMBEDDED ? probeEmbedded(ctx, use) : await probeHttp(id, use, router);
      probes.set(id, probe);
    }),
  );
  const ordered = [...usage.keys()].flatMap((id) => {
    const check = probes.get(id)?.check;
    return check ? [check] : [];
  });
  return [...ordered, conversationCheck(config, probes)];
}

/** Every provider the routes name, with its models and the routes that use it. */
function providersOfRoutes(config: LlmRouterConfig): Map<RouteProvider, Usage> {
  const usage = new Map<RouteProvider, Usage>();
  const add = (provider: RouteProvider, model: string, route: string) => {
    let use = usage.get(provider);
    if (!use) {
      use = { models: new Set(), routes: new Set() };
      usage.set(provider, use);
    }
    use.models.add(model);
    use.routes.add(route);
  };
  for (const [route, entry] of Object.entries(config.task_types)) {
    for (const target of [entry.primary, ...entry.fallback]) add(target.provider, target.model, route);
  }
  for (const target of conversationTargets(config)) add(target.provider, target.model, "conversation");
  return usage;
}

function conversationTargets(config: LlmRouterConfig) {
  const route = config.task_types.conversation;
  if (route) return [route.primary, ...(config.global.enable_fallback ? route.fallback : [])];
  return [{ provider: EMBEDDED, model: "default" } as const]; // the default route (llm/defaultRoute.ts)
}

async function probeHttp(id: RouteProvider, use: Usage, router: ReturnType<typeof routerFromFile>): Promise<Probe> {
  const routes = `routes: ${[...use.routes].join(", ")}`;
  const models = [...use.models];
  const fail = (problem: string, fix: string): Probe => ({
    answers: new Map(models.map((m) => [m, false])),
    problem,
    check: result(`router.provider.${id}`, id, "warn", `${problem} (${routes})`, { fix, fixable: false }),
  });
  let listed: string[];
  try {
    const provider = await router.provider(id);
    // Builds the model without a network call: a missing key or setting fails here, before anything is sent.
    await provider.languageModel(models[0]!);
    if (id === "cloud_azure") {
      return {
        answers: new Map(models.map((m) => [m, true])),
        check: result(
          `router.provider.${id}`,
          id,
          "ok",
          `key configured; deployments ${models.join(", ")} are not probed (listing them needs Azure's management API) (${routes})`,
        ),
      };
    }
    listed = (await provider.listModels(AbortSignal.timeout(PROBE_TIMEOUT_MS))).map((m) => m.model);
  } catch (error) {
    return fail(...explain(id, error));
  }
  const missing = CLOUD.has(id) && listed.length === 0 ? [] : models.filter((m) => !listed.includes(m));
  if (missing.length > 0) {
    const has =
      listed.length > 0
        ? `it lists ${listed.slice(0, 8).join(", ")}${listed.length > 8 ? ", ..." : ""}`
        : "it lists no model";
    const probe = fail(
      `answers, but has no model ${missing.join(", ")}; ${has}`,
      id === "local_server"
        ? `\`ollama pull ${missing[0]}\`, or route to a model it has: \`assistant config models set <category> ${id} <model>\``
        : `load that model in the server, or route to one it lists: \`assistant config models set <category> ${id} <model>\``,
    );
    for (const m of models) probe.answers.set(m, !missing.includes(m));
    return probe;
  }
  return {
    answers: new Map(models.map((m) => [m, true])),
    check: result(`router.provider.${id}`, id, "ok", `answers; has ${models.join(", ")} (${routes})`),
  };
}

/** A probe failure as what was found and what to do about it. */
function explain(id: RouteProvider, error: unknown): [problem: string, fix: string] {
  const name = (error as { name?: string }).name;
  if (name === "TimeoutError" || name === "AbortError") {
    return [`no answer within ${PROBE_TIMEOUT_MS / 1000} s`, `${startFix(id)}; a slow machine may just need a retry`];
  }
  const message = error instanceof Error ? error.message.replace(new RegExp(`^${id}: `), "") : String(error);
  if (error instanceof ProviderFailure && error.status === 404) {
    if (id === "local_server") {
      return [
        `${message}: the server does not speak the Ollama protocol`,
        "for an OpenAI-compatible server (LM Studio, vLLM, llama-server) use the lowbit_server provider; `assistant discover` prints the command for the server it finds",
      ];
    }
    if (id === "lowbit_server") {
      return [
        `${message}: the server does not speak the OpenAI protocol there`,
        "check providers.lowbit_server.base_url (it ends in /v1); for Ollama use the local_server provider; `assistant discover` prints the command",
      ];
    }
  }
  if (error instanceof ProviderFailure && (error.status === 401 || error.status === 403)) {
    return [`the key was refused: ${message}`, `store a valid key: ${keyFix(id)}`];
  }
  if (error instanceof ProviderFailure && error.kind === "unavailable" && /API key|api_key_ref/.test(message)) {
    const fix = CLOUD.has(id)
      ? keyFix(id)
      : `set what providers.${id}.api_key_ref names, or remove it when the server needs no key`;
    return [message, fix];
  }
  return [message, startFix(id)];
}

function startFix(id: RouteProvider): string {
  switch (id) {
    case "local_server":
      return "start Ollama (`ollama serve`), or run `assistant discover` to find the server you run";
    case "lowbit_server":
      return "start the server (llama-server, LM Studio, vLLM...), or run `assistant discover` to find the one you run";
    default:
      return `check the network and providers.${id}.base_url in llm_router.yaml`;
  }
}

function keyFix(id: RouteProvider): string {
  if (id === "cloud_a") return "`assistant config provider add-cloud-a`";
  if (id === "cloud_b") return "`assistant config provider add-cloud-b`";
  return "`assistant vault set <name>` and providers.cloud_azure.api_key_ref: vault://<name>";
}

/** The embedded model can answer when its file is a GGUF file; doctor's embedded checks report the details. */
function probeEmbedded(ctx: CheckContext, use: Usage): Probe {
  let problem: string | undefined;
  try {
    const model = resolveEmbeddedModel(readSettingsOf(ctx.env, EMBEDDED_MODEL_SETTINGS), ctx.paths);
    if (!existsSync(model.path)) problem = `${model.model_id} is not downloaded`;
    else {
      const gguf = ggufProblem(model.path);
      if (gguf) problem = `${model.path} is not a usable GGUF file`;
    }
  } catch (error) {
    problem = (error as Error).message;
  }
  return { answers: new Map([...use.models].map((m) => [m, problem === undefined])), ...(problem ? { problem } : {}) };
}

/** Whether the default route has a model that answers; the built-in core alone does not count. */
function conversationCheck(config: LlmRouterConfig, probes: Map<RouteProvider, Probe>): CheckResult {
  const targets = conversationTargets(config).filter((t) => t.provider !== CORE);
  const chain = targets.map((t) => `${t.provider}/${t.model}`).join(" -> ") || "none";
  const answering = targets.find((t) => probes.get(t.provider)?.answers.get(t.model));
  if (answering) {
    const first = answering === targets[0];
    return result(
      "router.conversation",
      "conversation route answers",
      "ok",
      `${answering.provider}/${answering.model} can answer${first ? "" : " (an earlier target cannot: see above)"}`,
    );
  }
  const why = targets.map((t) => `${t.provider}/${t.model}: ${probes.get(t.provider)?.problem ?? "cannot answer"}`);
  const fix =
    targets[0]?.provider === EMBEDDED
      ? "run `assistant config models embedded-download`, or use a model server you run: `assistant discover`"
      : `fix ${targets[0]?.provider ?? "the route"} as said above, or run \`assistant discover\``;
  return result(
    "router.conversation",
    "conversation route answers",
    "warn",
    `no model can answer a conversation (${chain}): ${why.join("; ") || "the route has no model"}; only the built-in core would`,
    { fix, fixable: false },
  );
}
