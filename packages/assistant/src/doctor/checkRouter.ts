import { type ConfigValue, configFilePath, loadConfig } from "../config/configFiles.ts";
import type { DataPaths } from "../config/paths.ts";
import type { RouteTarget } from "../config/schemas/llmRouter.ts";
import { ConfigError } from "../util/errors.ts";
import { readConfigText } from "../util/fileText.ts";
import { type CheckContext, type CheckResult, FIX_COMMAND, result } from "./types.ts";

// The default embedded route (docs/models.md#what-happens-to-a-message): `conversation` answers with the embedded model
// and ends with assistant_core, which always answers. A route that puts a provider the user chose first (what
// `assistant init` writes for a local server or a cloud) is fine as long as the embedded model and core are still
// behind it: `doctor --fix` only realigns a chain that lost them, so it never undoes a deliberate choice.

export type RouteState =
  | { kind: "missing"; file: string }
  | { kind: "invalid"; file: string }
  | { kind: "default" | "custom" | "misaligned"; file: string; chain: string[]; problem?: string };

const same = (t: RouteTarget | undefined, provider: string, model: string) =>
  t?.provider === provider && t.model === model;

export function defaultRouteState(paths: DataPaths, projectRoot?: string): RouteState {
  const options = projectRoot ? { projectRoot } : {};
  const file = configFilePath("llm_router", paths, options);
  let config: ConfigValue<"llm_router">;
  try {
    if (readConfigText(file) === undefined) return { kind: "missing", file };
    config = loadConfig("llm_router", paths, options);
  } catch (error) {
    if (error instanceof ConfigError) return { kind: "invalid", file };
    throw error;
  }
  const route = config.task_types.conversation;
  if (!route) return { kind: "misaligned", file, chain: [], problem: "there is no conversation route" };
  const chain = [route.primary, ...route.fallback];
  const names = chain.map((t) => `${t.provider}/${t.model}`);
  const last = route.fallback.at(-1);
  if (!same(last, "assistant_core", "core")) {
    return { kind: "misaligned", file, chain: names, problem: "assistant_core/core is not the last fallback" };
  }
  if (same(route.primary, "assistant_embedded", "default")) return { kind: "default", file, chain: names };
  if (chain.some((t) => same(t, "assistant_embedded", "default"))) return { kind: "custom", file, chain: names };
  return {
    kind: "misaligned",
    file,
    chain: names,
    problem: "the embedded model (assistant_embedded/default) is not in the chain",
  };
}

/** Undefined when the router file is missing or invalid: the config check already reports that. */
export function checkDefaultRoute(ctx: CheckContext): CheckResult | undefined {
  const state = defaultRouteState(ctx.paths, ctx.projectRoot);
  if (state.kind === "missing" || state.kind === "invalid") return undefined;
  const title = "default route";
  const chain = `conversation: ${state.chain.join(" -> ")}`;
  if (state.kind === "default") return result("router.default_route", title, "ok", chain);
  if (state.kind === "custom") {
    return result(
      "router.default_route",
      title,
      "ok",
      `${chain} (your provider first; embedded model and core as fallbacks)`,
    );
  }
  return result("router.default_route", title, "warn", `${state.problem} (${chain || "conversation: none"})`, {
    fix: `${FIX_COMMAND} (makes assistant_embedded/default the primary and assistant_core/core the last fallback, keeping your comments)`,
    fixable: true,
  });
}
