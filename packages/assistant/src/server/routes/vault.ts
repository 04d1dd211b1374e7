import { z } from "zod";
import type { Services } from "../../runtime/services.ts";
import { pageByKey, pageQuerySchema, pageSchema } from "../pagination.ts";
import { defineRoute, type RouteSpec } from "../route.ts";

const keySchema = z.string().min(1).max(128);
const vaultKeySchema = z.object({ key: z.string() }).meta({ id: "VaultKey" });
/** What opening or writing the vault can answer: its file lock held elsewhere, a key that cannot open it. */
const VAULT_ERRORS = ["conflict", "vault_locked", "config_invalid"] as const;

export function vaultRoutes(services: Services): RouteSpec[] {
  return [
    defineRoute({
      method: "GET",
      url: "/api/vault",
      operationId: "listVaultKeys",
      summary: "Names of the stored secrets (values are never listed)",
      tag: "vault",
      query: pageQuerySchema,
      response: pageSchema(vaultKeySchema),
      errors: [...VAULT_ERRORS],
      handler: ({ query }) => {
        const keys = services.vault.list().map((key) => ({ key }));
        return pageByKey(keys, (k) => k.key, query.limit, query.cursor);
      },
    }),
    defineRoute({
      method: "PUT",
      url: "/api/vault",
      operationId: "setVaultSecret",
      summary: "Stores a secret",
      tag: "vault",
      body: z.strictObject({ key: keySchema, value: z.string().min(1) }),
      response: vaultKeySchema,
      errors: [...VAULT_ERRORS],
      handler: async ({ body }) => {
        await services.vault.set(body.key, body.value);
        services.events.emit("vault_updated", { key: body.key, action: "set" });
        return { key: body.key };
      },
    }),
    defineRoute({
      method: "DELETE",
      url: "/api/vault",
      operationId: "deleteVaultSecret",
      summary: "Deletes a secret",
      tag: "vault",
      body: z.strictObject({ key: keySchema }),
      response: z.object({ key: z.string(), deleted: z.literal(true) }),
      errors: ["not_found", ...VAULT_ERRORS],
      handler: async ({ body }) => {
        await services.vault.delete(body.key);
        services.events.emit("vault_updated", { key: body.key, action: "delete" });
        return { key: body.key, deleted: true as const };
      },
    }),
  ];
}
