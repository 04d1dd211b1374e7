import type { LlmRouterConfig, RouteProvider, RouteTarget, TaskRoute } from "../config/schemas/llmRouter.ts";
import { DEFAULT_CONVERSATION_ROUTE } from "./defaultRoute.ts";

// Which targets a task type name resolves to (docs/models.md#what-happens-to-a-message). A name with an entry uses
// it; otherwise aliases, the orchestrator -> system -> conversation chain and the specialists' related types are
// walked in order; the last word is `conversation`, whose own default is the embedded model then core.

/** Delegation and mission aliases: agent ids and `heartbeat_preferred_task_type` values that name a route. */
export const TASK_TYPE_ALIASES: Record<string, string> = {
  code: "code_generation",
  search: "conversation",
  schedule: "conversation",
};

/** Related types tried, in order, when a specialist (or an internal type) has no entry of its own. */
export const RELATED_TYPES: Record<string, string[]> = {
  orchestrator: ["system"],
  financial: ["data_analysis"],
  technical_writer: ["creative_writing"],
  creative: ["creative_writing"],
  analyst: ["creative_writing"],
  research: ["scientific_analysis"],
  security_audit: ["code_generation", "system_diagnostic"],
  architect: ["code_generation", "system_diagnostic"],
  frontend: ["code_generation"],
  backend: ["code_generation"],
  integration: ["code_generation"],
  database: ["data_analysis", "code_generation"],
  qa: ["system_diagnostic", "code_generation"],
};

/** Providers that run on this machine or the LAN: the only ones ASSISTANT_DEGRADED_MODE=1 keeps. */
export const LOCAL_PROVIDERS: ReadonlySet<RouteProvider> = new Set([
  "assistant_embedded",
  "assistant_core",
  "local_server",
  "lowbit_server",
]);

const CORE_TARGET: RouteTarget = { provider: "assistant_core", model: "core" };

export interface ResolvedRoute {
  /** The name asked for. */
  taskType: string;
  /** The task_types key (or "default") whose route is used. */
  source: string;
  /** Primary first, then fallbacks (when enabled), filtered for degraded mode. */
  targets: RouteTarget[];
  constraints: TaskRoute["constraints"];
  /** Targets dropped by degraded mode, reported when nothing is left. */
  dropped: RouteTarget[];
}

export interface ResolveOptions {
  degraded: boolean;
}

/** The candidate names for a task type, most specific first; `conversation` always ends the chain. */
export function resolutionChain(taskType: string): string[] {
  const name = TASK_TYPE_ALIASES[taskType] ?? taskType;
  return [...new Set([name, ...(RELATED_TYPES[name] ?? []), "conversation"])];
}

export function resolveRoute(config: LlmRouterConfig, taskType: string, options: ResolveOptions): ResolvedRoute {
  const name = TASK_TYPE_ALIASES[taskType] ?? taskType;
  let source = "default";
  let route: TaskRoute = {
    primary: DEFAULT_CONVERSATION_ROUTE.primary,
    fallback: [...DEFAULT_CONVERSATION_ROUTE.fallback],
  };
  if (name === "image_generation") {
    // Image generation is a separate backend: never fall back to a chat model.
    const entry = config.task_types.image_generation;
    return finish(taskType, entry ? "image_generation" : "none", entry, config, options, false);
  }
  for (const candidate of resolutionChain(taskType)) {
    const entry = config.task_types[candidate];
    if (entry) {
      source = candidate;
      route = entry;
      break;
    }
  }
  return finish(taskType, source, route, config, options, true);
}

function finish(
  taskType: string,
  source: string,
  route: TaskRoute | undefined,
  config: LlmRouterConfig,
  options: ResolveOptions,
  chat: boolean,
): ResolvedRoute {
  if (!route) return { taskType, source, targets: [], constraints: undefined, dropped: [] };
  const all = config.global.enable_fallback ? [route.primary, ...route.fallback] : [route.primary];
  // Chat always ends at core, which answers honestly that no model is available.
  if (chat && config.global.enable_fallback && !all.some((t) => t.provider === "assistant_core")) all.push(CORE_TARGET);
  const unique = all.filter((t, i) => all.findIndex((u) => u.provider === t.provider && u.model === t.model) === i);
  const targets = options.degraded ? unique.filter((t) => LOCAL_PROVIDERS.has(t.provider)) : unique;
  const dropped = unique.filter((t) => !targets.includes(t));
  return { taskType, source, targets, constraints: route.constraints, dropped };
}
