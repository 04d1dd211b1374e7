import { z } from "zod";
import type { Services } from "../../runtime/services.ts";
import { pageByKey, pageQuerySchema, pageSchema } from "../pagination.ts";
import { defineRoute, type RouteSpec } from "../route.ts";

const keySchema = z.string().min(1).max(128);

export function vaultRoutes(services: Services): RouteSpec[] {
  return [
    defineRoute({
      method: "GET",
      url: "/api/vault",
      summary: "Names of the stored secrets (values are never listed)",
      tag: "vault",
      query: pageQuerySchema,
      response: pageSchema(z.object({ key: z.string() })),
      handler: ({ query }) => {
        const keys = services.vault.list().map((key) => ({ key }));
        return pageByKey(keys, (k) => k.key, query.limit, query.cursor);
      },
    }),
    defineRoute({
      method: "PUT",
      url: "/api/vault",
      summary: "Stores a secret",
      tag: "vault",
      body: z.strictObject({ key: keySchema, value: z.string().min(1) }),
      response: z.object({ key: z.string() }),
      handler: async ({ body }) => {
        await services.vault.set(body.key, body.value);
        services.events.emit("vault_updated", { key: body.key, action: "set" });
        return { key: body.key };
      },
    }),
    defineRoute({
      method: "DELETE",
      url: "/api/vault",
      summary: "Deletes a secret",
      tag: "vault",
      body: z.strictObject({ key: keySchema }),
      response: z.object({ key: z.string(), deleted: z.literal(true) }),
      handler: async ({ body }) => {
        await services.vault.delete(body.key);
        services.events.emit("vault_updated", { key: body.key, action: "delete" });
        return { key: body.key, deleted: true as const };
      },
    }),
  ];
}
