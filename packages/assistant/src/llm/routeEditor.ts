import { type Document, isMap, isSeq, type YAMLMap, type YAMLSeq } from "yaml";
import { z } from "zod";
import { validateConfigValue } from "../config/configValue.ts";
import { alignDefaultRoute } from "../config/defaults.ts";
import { type DataPaths, locateRouterFile } from "../config/paths.ts";
import {
  type LlmRouterConfig,
  llmRouterSchema,
  type ModelOptions,
  ROUTE_PROVIDERS,
  type RouteProvider,
  type RouteTarget,
  type TaskRoute,
} from "../config/schemas/llmRouter.ts";
import { readYamlFile, setYamlValue, updateYamlFile, yamlDocumentValue } from "../config/yamlDocument.ts";
import { ensureDataDir } from "../setup/dataDir.ts";
import { AppError } from "../util/errors.ts";
import { CHAT_CATEGORIES } from "./classify.ts";
import {
  DEFAULT_CONVERSATION_ROUTE,
  type RouteRef,
  type RouteTargetRef,
  routeTargetRefSchema,
} from "./defaultRoute.ts";
import { resolutionChain } from "./routing.ts";
import { canonicalCategory } from "./taskTypes.ts";

// Reading and editing the routes of llm_router.yaml for `assistant config models` (and later the UI and the
// `/models set` slash command). Edits go through the YAML Document API, so the user's comments and layout stay,
// and the whole file is validated before the atomic write: a refused edit leaves the file byte-identical.

/** Listed even without an entry, so a person sees every route the daemon uses. */
const LISTED_CATEGORIES: readonly string[] = [...CHAT_CATEGORIES, "system", "orchestrator", "image_generation"];

export const routeViewSchema = z
  .object({
    category: z.string(),
    /** null: no route at all (image_generation without an entry has no chat model to fall back to). */
    primary: routeTargetRefSchema.nullable(),
    fallback: z.array(routeTargetRefSchema),
    /** "file": the category has an entry; "default": it uses the route it inherits. */
    source: z.enum(["file", "default"]),
  })
  .meta({ id: "RouteView" });

export type RouteView = z.infer<typeof routeViewSchema>;

export interface SetRouteResult {
  category: string;
  primary: RouteTargetRef;
  fallback: RouteTargetRef[];
  file: string;
  /** The category's route before the edit (its inherited route when it had no entry). */
  previous: RouteView;
  changed: boolean;
}

/** Every listed category plus every task type of the file, each with the route the daemon would use. */
export function listRoutes(config: LlmRouterConfig): RouteView[] {
  const names = new Set([...LISTED_CATEGORIES, ...Object.keys(config.task_types)]);
  return [...names].map((name) => routeView(config, name));
}

/** The route of one category (default `conversation`, the route of unclassified chats); an alias shows its category. */
export function getRoute(config: LlmRouterConfig, category = "conversation"): RouteView {
  return routeView(config, config.task_types[category] ? category : canonicalCategory(category));
}

function routeView(config: LlmRouterConfig, category: string): RouteView {
  const route = effectiveRoute(config, category);
  return {
    category,
    primary: route ? plain(route.primary) : null,
    fallback: route ? route.fallback.map(plain) : [],
    source: config.task_types[category] ? "file" : "default",
  };
}

/**
 * A category without an entry inherits what the engine would use (routing.ts: aliases, orchestrator -> system,
 * the specialists' related types, then conversation, whose default is the embedded model). image_generation
 * inherits nothing: its primary selects an image backend, which a chat model cannot stand in for.
 */
function effectiveRoute(config: LlmRouterConfig, category: string): RouteRef | null {
  if (category === "image_generation") return config.task_types.image_generation ?? null;
  for (const name of resolutionChain(category)) {
    const entry = config.task_types[name];
    if (entry) return entry;
  }
  return DEFAULT_CONVERSATION_ROUTE;
}

function plain(target: RouteTargetRef | RouteTarget): RouteTargetRef {
  return { provider: target.provider, model: target.model };
}

/** Checks a route before anything is written; used by setRoute and by the provider commands that set one. */
export function parseRouteTarget(category: string, provider: string, model: string): RouteTargetRef {
  canonicalCategory(category);
  if (!(ROUTE_PROVIDERS as readonly string[]).includes(provider)) {
    throw new AppError(
      "invalid_request",
      `unknown provider ${JSON.stringify(provider.slice(0, 64))}: expected one of ${ROUTE_PROVIDERS.join(", ")}`,
      { field: "provider" },
    );
  }
  const name = model.trim();
  if (name === "") throw new AppError("invalid_request", "the model name must not be empty", { field: "model" });
  if (/\p{Cc}/u.test(name)) {
    throw new AppError("invalid_request", "the model name must be one line of text", { field: "model" });
  }
  return { provider: provider as RouteProvider, model: name };
}

/**
 * Makes `provider`/`model` the primary of `category`. The previous primary becomes the first fallback, and the
 * new primary is removed from the fallbacks. A category without an entry gets one whose fallbacks are the route
 * it inherited, so nothing that answered before stops answering. A missing router file is created first.
 */
export function setRoute(routerPath: string, typed: string, provider: string, model: string): SetRouteResult {
  const wanted = parseRouteTarget(typed, provider, model);
  const category = canonicalCategory(typed);
  ensureRouterFile(routerPath);
  let previous!: RouteView;
  let after!: TaskRoute;
  const { changed } = updateYamlFile(
    routerPath,
    (doc) => {
      // Validated before the edit too: the inherited route of a new category is read from this config.
      previous = routeView(routerConfig(doc, routerPath), category);
      editRoute(doc, category, wanted, previous);
      after = routerConfig(doc, routerPath).task_types[category]!; // editRoute always leaves an entry
    },
    llmRouterSchema,
  );
  return {
    category,
    primary: plain(after.primary),
    fallback: after.fallback.map(plain),
    file: routerPath,
    previous,
    changed,
  };
}

export interface RouteEditResult {
  category: string;
  file: string;
  /** The category's route after the edit (inherited when the entry was removed). */
  route: RouteView;
  changed: boolean;
}

/** Removes one fallback of a category's entry; a target that is not among its fallbacks is a clear not_found. */
export function removeFallback(routerPath: string, typed: string, provider: string, model: string): RouteEditResult {
  const target = parseRouteTarget(typed, provider, model);
  let category = "";
  const { changed } = updateYamlFile(
    routerPath,
    (doc) => {
      const config = routerConfig(doc, routerPath);
      category = config.task_types[typed] ? typed : canonicalCategory(typed);
      const entry = doc.getIn(["task_types", category], true);
      const fallback = isMap(entry) ? entry.get("fallback", true) : undefined;
      const list = isSeq(fallback) ? fallback : undefined;
      const index = list ? list.items.findIndex((item) => isMap(item) && isTarget(item, target)) : -1;
      if (!list || index < 0) {
        const current = routeView(config, category).fallback.map((t) => `${t.provider}/${t.model}`);
        const where = isMap(entry) ? "" : ` (it has no entry in ${routerPath}: its route is inherited)`;
        throw new AppError(
          "not_found",
          `${target.provider}/${target.model} is not a fallback of ${category}${where}; its fallbacks: ${current.join(", ") || "(none)"}`,
        );
      }
      list.items.splice(index, 1);
    },
    llmRouterSchema,
  );
  return { category, file: routerPath, route: routeAfter(routerPath, category), changed };
}

/**
 * Removes a category's entry, so it uses the route it inherits again (conversation: the default route). A name
 * the file has is accepted even when it is no category, so an entry made by a typo can be removed.
 */
export function resetRoute(routerPath: string, typed: string): RouteEditResult {
  let category = "";
  const { changed } = updateYamlFile(
    routerPath,
    (doc) => {
      const config = routerConfig(doc, routerPath);
      category = config.task_types[typed] ? typed : canonicalCategory(typed);
      if (config.task_types[category]) doc.deleteIn(["task_types", category]);
    },
    llmRouterSchema,
  );
  return { category, file: routerPath, route: routeAfter(routerPath, category), changed };
}

function routeAfter(routerPath: string, category: string): RouteView {
  const { doc } = readYamlFile(routerPath);
  return routeView(routerConfig(doc, routerPath), category);
}

function editRoute(doc: Document, category: string, wanted: RouteTargetRef, previous: RouteView): void {
  ensureMapping(doc, ["task_types"]);
  const entry = doc.getIn(["task_types", category], true);
  if (!isMap(entry)) {
    const inherited = previous.primary ? [previous.primary, ...previous.fallback] : [];
    const fallback = inherited.filter((target) => !sameTarget(target, wanted));
    setYamlValue(doc, ["task_types", category], { primary: wanted, fallback });
    return;
  }
  const fallback = fallbackList(doc, entry);
  const primary = entry.get("primary", true);
  if (!(isMap(primary) && isTarget(primary, wanted))) {
    // A fallback that already names the new primary is promoted, with its config and comments.
    const promoted = fallback.items.find((item) => isMap(item) && isTarget(item, wanted));
    const old = isMap(primary) ? primary : undefined;
    fallback.items = fallback.items.filter((item) => !(old && isMap(item) && isTarget(item, targetOf(old))));
    if (old) fallback.items.unshift(old);
    entry.set("primary", promoted ?? doc.createNode(wanted));
  }
  fallback.items = fallback.items.filter((item) => !(isMap(item) && isTarget(item, wanted)));
}

function fallbackList(doc: Document, entry: YAMLMap): YAMLSeq {
  const existing = entry.get("fallback", true);
  if (isSeq(existing)) {
    if (existing.items.length === 0) existing.flow = false; // `fallback: []` grows as a block list
    return existing;
  }
  const created = doc.createNode([]) as YAMLSeq;
  entry.set("fallback", created);
  return created;
}

/**
 * Makes the node at `keys` (and each one above it) a mapping new keys can be added to: creates it when missing,
 * replaces an empty value (`providers:` with nothing after it), and turns an empty `{}` into block style so the
 * additions read like the rest of the file.
 */
export function ensureMapping(doc: Document, keys: readonly string[]): void {
  for (let depth = 1; depth <= keys.length; depth++) {
    const path = keys.slice(0, depth);
    const node = doc.getIn(path, true);
    if (!isMap(node)) {
      setYamlValue(doc, path, {});
      (doc.getIn(path, true) as YAMLMap).flow = false;
    } else if (node.items.length === 0) node.flow = false;
  }
}

/**
 * The router file the daemon reads (data directory, then project root), where edits go. When that is the data
 * directory, it is made sure to exist, with a clear message when it cannot be used.
 */
export function editableRouterFile(paths: DataPaths): string {
  const file = locateRouterFile(paths).path;
  if (file === paths.routerFile) ensureDataDir(paths.dataDir);
  return file;
}

/** A missing or blank router file is first given the default content, so an edit starts from the documented file. */
export function ensureRouterFile(routerPath: string): void {
  if (readYamlFile(routerPath).doc.contents === null) alignDefaultRoute(routerPath);
}

function routerConfig(doc: Document, file: string): LlmRouterConfig {
  return validateConfigValue(llmRouterSchema, yamlDocumentValue(doc, file), file);
}

function targetOf(node: YAMLMap): RouteTargetRef {
  return { provider: node.get("provider") as RouteProvider, model: String(node.get("model")) };
}

function isTarget(node: YAMLMap, target: RouteTargetRef): boolean {
  return node.get("provider") === target.provider && node.get("model") === target.model;
}

function sameTarget(a: RouteTargetRef, b: RouteTargetRef): boolean {
  return a.provider === b.provider && a.model === b.model;
}

/**
 * Merges fetched model metadata into `model_options` (`assistant config models fetch`): each given field replaces
 * the stored one, fields the fetch did not return (a num_ctx the user tuned) stay, and so do comments.
 */
export function saveModelOptions(
  routerPath: string,
  options: Record<string, ModelOptions>,
): { file: string; models: string[]; changed: boolean } {
  const models = Object.keys(options);
  for (const model of models) {
    if (model.trim() === "")
      throw new AppError("invalid_request", "a model name must not be empty", { field: "model" });
  }
  ensureRouterFile(routerPath);
  const { changed } = updateYamlFile(
    routerPath,
    (doc) => {
      routerConfig(doc, routerPath); // an invalid file is reported as it is, not as a failed merge
      for (const [model, fields] of Object.entries(options)) {
        ensureMapping(doc, ["model_options", model]);
        for (const [key, value] of Object.entries(fields)) {
          if (value !== undefined) setYamlValue(doc, ["model_options", model, key], value);
        }
      }
    },
    llmRouterSchema,
  );
  return { file: routerPath, models, changed };
}
