import { z } from "zod";
import { catalogEntries, catalogEntrySchema } from "../../plugins/catalog.ts";
import { invalidPluginSchema, pluginInfoSchema, pluginReloadSchema } from "../../plugins/registry.ts";
import { reputationSchema } from "../../plugins/reputation.ts";
import { loadedRuleSchema, ruleMatchResultSchema } from "../../plugins/routingRules.ts";
import type { Services } from "../../runtime/services.ts";
import { pageSchema } from "../pagination.ts";
import { defineRoute, type RouteSpec } from "../route.ts";

// Plugins (docs/plugins.md): installed plugins with scores and disabled-by-reputation state, reload without a
// restart, install from a local path, uninstall, user feedback, reputation reset, the catalog, and the routing
// rules of plugins and skills with a match tester. Thin over plugins/.

const idParams = z.strictObject({ id: z.string().min(1).max(64) });
const MAX_MESSAGE = 20_000;

export function pluginRoutes(services: Services): RouteSpec[] {
  const { registry, reputation } = services.plugins;
  const { routing } = services;
  const matchOf = (message: string): z.infer<typeof ruleMatchResultSchema> => {
    const match = routing.match(message);
    return match
      ? { matched: true, rule: match.rule, matched_on: match.matched_on, target: match.rule.target }
      : { matched: false };
  };
  return [
    defineRoute({
      method: "GET",
      url: "/api/plugins",
      operationId: "listPlugins",
      response: z
        .object({
          items: z.array(pluginInfoSchema),
          invalid: z.array(invalidPluginSchema),
          next_cursor: z.string().nullable(),
        })
        .meta({ id: "PluginList" }),
      summary: "Installed plugins, their scores and disabled-by-reputation state; skipped folders with the reason",
      tag: "plugins",
      handler: () => ({ items: registry.list(), invalid: registry.invalid(), next_cursor: null }),
    }),
    defineRoute({
      method: "GET",
      url: "/api/plugins/catalog",
      operationId: "listCatalog",
      response: pageSchema(catalogEntrySchema),
      summary: "Every installed plugin and skill with its catalog metadata (author, version, trust level, status)",
      tag: "plugins",
      handler: () => ({ items: catalogEntries(registry.list(), services.skills.registry.list()), next_cursor: null }),
    }),
    defineRoute({
      method: "GET",
      url: "/api/plugins/:id",
      operationId: "getPlugin",
      response: pluginInfoSchema,
      errors: ["not_found"],
      summary: "One plugin with its manifest and reputation",
      tag: "plugins",
      params: idParams,
      handler: ({ params }) => registry.get(params.id),
    }),
    defineRoute({
      method: "POST",
      url: "/api/plugins/reload",
      operationId: "reloadPlugins",
      response: pluginReloadSchema,
      summary: "Reloads manifests and modules without a daemon restart",
      tag: "plugins",
      handler: () => registry.reload(),
    }),
    defineRoute({
      method: "POST",
      url: "/api/plugins/install",
      operationId: "installPlugin",
      status: 201,
      response: pluginInfoSchema,
      errors: ["not_found", "conflict"],
      summary: "Installs a plugin from a folder on this machine holding plugin.json and its .wasm",
      tag: "plugins",
      body: z.strictObject({ path: z.string().min(1).max(4096), replace: z.boolean().optional() }),
      handler: ({ body }) => registry.install(body.path, body.replace === true),
    }),
    defineRoute({
      method: "DELETE",
      url: "/api/plugins/:id",
      operationId: "uninstallPlugin",
      response: z.object({ removed: z.string() }),
      errors: ["not_found"],
      summary: "Uninstalls a plugin (its folder and reputation)",
      tag: "plugins",
      params: idParams,
      handler: async ({ params }) => {
        await registry.uninstall(params.id);
        return { removed: params.id };
      },
    }),
    defineRoute({
      method: "POST",
      url: "/api/plugins/:id/feedback",
      operationId: "sendPluginFeedback",
      response: reputationSchema,
      errors: ["not_found"],
      summary: "User feedback on a plugin's work: up or down moves its reputation",
      tag: "plugins",
      params: idParams,
      body: z.strictObject({ rating: z.enum(["up", "down"]) }),
      handler: ({ params, body }) => registry.feedback(params.id, body.rating),
    }),
    defineRoute({
      method: "POST",
      url: "/api/plugins/reputation/reset",
      operationId: "resetPluginReputation",
      response: z.object({ reset: z.string().describe("the plugin id, or `all`") }),
      errors: ["not_found"],
      summary: "Resets one plugin's reputation ({plugin_id}) or every plugin's (empty body)",
      tag: "plugins",
      body: z.strictObject({ plugin_id: z.string().min(1).max(64).optional() }).optional(),
      handler: ({ body }) => {
        const id = body?.plugin_id ?? null;
        if (id !== null) registry.get(id); // 404 for an unknown plugin
        reputation.reset(id);
        return { reset: id ?? "all" };
      },
    }),
    defineRoute({
      method: "GET",
      url: "/api/plugins/routing_rules",
      operationId: "listRoutingRules",
      response: z
        .object({ items: z.array(loadedRuleSchema), match: ruleMatchResultSchema.optional() })
        .meta({ id: "RoutingRules" }),
      summary: "Routing rules of plugins and skills (debug), and the match for `message` when given",
      tag: "plugins",
      query: z.strictObject({ message: z.string().max(MAX_MESSAGE).optional() }),
      handler: ({ query }) => ({
        items: routing.rules(),
        ...(query.message !== undefined ? { match: matchOf(query.message) } : {}),
      }),
    }),
    defineRoute({
      method: "POST",
      url: "/api/plugins/routing_rules/match",
      operationId: "matchRoutingRule",
      response: ruleMatchResultSchema,
      summary: "Tests which routing rule a message matches",
      tag: "plugins",
      body: z.strictObject({ message: z.string().min(1).max(MAX_MESSAGE) }),
      handler: ({ body }) => matchOf(body.message),
    }),
  ];
}
