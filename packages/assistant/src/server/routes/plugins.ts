import { z } from "zod";
import { catalogEntries } from "../../plugins/catalog.ts";
import type { Services } from "../../runtime/services.ts";
import { defineRoute, type RouteSpec } from "../route.ts";

// Plugins (docs/plugins.md): installed plugins with scores and disabled-by-reputation state, reload without a
// restart, install from a local path, uninstall, user feedback, reputation reset, the catalog, and the routing
// rules of plugins and skills with a match tester. Thin over plugins/.

const idParams = z.strictObject({ id: z.string().min(1).max(64) });
const MAX_MESSAGE = 20_000;

export function pluginRoutes(services: Services): RouteSpec[] {
  const { registry, reputation } = services.plugins;
  const { routing } = services;
  const matchOf = (message: string) => {
    const match = routing.match(message);
    return match
      ? { matched: true, rule: match.rule, matched_on: match.matched_on, target: match.rule.target }
      : { matched: false };
  };
  return [
    defineRoute({
      method: "GET",
      url: "/api/plugins",
      summary: "Installed plugins, their scores and disabled-by-reputation state; skipped folders with the reason",
      tag: "plugins",
      handler: () => ({ items: registry.list(), invalid: registry.invalid(), next_cursor: null }),
    }),
    defineRoute({
      method: "GET",
      url: "/api/plugins/catalog",
      summary: "Every installed plugin and skill with its catalog metadata (author, version, trust level, status)",
      tag: "plugins",
      handler: () => ({ items: catalogEntries(registry.list(), services.skills.registry.list()), next_cursor: null }),
    }),
    defineRoute({
      method: "GET",
      url: "/api/plugins/:id",
      summary: "One plugin with its manifest and reputation",
      tag: "plugins",
      params: idParams,
      handler: ({ params }) => registry.get(params.id),
    }),
    defineRoute({
      method: "POST",
      url: "/api/plugins/reload",
      summary: "Reloads manifests and modules without a daemon restart",
      tag: "plugins",
      handler: () => registry.reload(),
    }),
    defineRoute({
      method: "POST",
      url: "/api/plugins/install",
      summary: "Installs a plugin from a folder on this machine holding plugin.json and its .wasm",
      tag: "plugins",
      body: z.strictObject({ path: z.string().min(1).max(4096), replace: z.boolean().optional() }),
      handler: async ({ body }, _request, reply) => {
        const installed = await registry.install(body.path, body.replace === true);
        reply.code(201);
        return installed;
      },
    }),
    defineRoute({
      method: "DELETE",
      url: "/api/plugins/:id",
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
      summary: "User feedback on a plugin's work: up or down moves its reputation",
      tag: "plugins",
      params: idParams,
      body: z.strictObject({ rating: z.enum(["up", "down"]) }),
      handler: ({ params, body }) => registry.feedback(params.id, body.rating),
    }),
    defineRoute({
      method: "POST",
      url: "/api/plugins/reputation/reset",
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
      summary: "Tests which routing rule a message matches",
      tag: "plugins",
      body: z.strictObject({ message: z.string().min(1).max(MAX_MESSAGE) }),
      handler: ({ body }) => matchOf(body.message),
    }),
  ];
}
