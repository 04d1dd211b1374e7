import { z } from "zod";
import { VERSION } from "../version.ts";
import type { RouteSpec } from "./route.ts";

const errorSchema = z.object({
  error: z.object({ code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()).optional() }),
});

function jsonSchema(schema: z.ZodType, io: "input" | "output"): unknown {
  return z.toJSONSchema(schema, { io, unrepresentable: "any" });
}

/** `GET /api/openapi.json`: derived from the same route list that the server registers, so it cannot drift. */
export function buildOpenApi(routes: RouteSpec[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = route.url.replace(/:([A-Za-z_]+)/g, "{$1}");
    const parameters: unknown[] = [];
    for (const [where, schema] of [
      ["path", route.params],
      ["query", route.query],
    ] as const) {
      if (!schema) continue;
      const json = jsonSchema(schema, "input") as { properties?: Record<string, unknown>; required?: string[] };
      for (const [name, property] of Object.entries(json.properties ?? {})) {
        parameters.push({
          name,
          in: where,
          required: where === "path" || (json.required ?? []).includes(name),
          schema: property,
        });
      }
    }
    const auth = route.auth ?? "token";
    const success = String(route.status ?? 200);
    const operation: Record<string, unknown> = {
      summary: route.summary,
      tags: [route.tag],
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(route.body
        ? {
            requestBody: {
              required: true,
              content: { "application/json": { schema: jsonSchema(route.body, "input") } },
            },
          }
        : {}),
      responses: {
        [success]: {
          description: "success",
          content: route.raw
            ? { [route.raw.contentType]: {} }
            : { "application/json": { schema: route.response ? jsonSchema(route.response, "output") : {} } },
        },
        default: {
          description: "error",
          content: { "application/json": { schema: jsonSchema(errorSchema, "output") } },
        },
      },
      security: auth === "token" ? [{ bearer: [] }, { session: [] }] : [],
    };
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: operation };
  }
  return {
    openapi: "3.1.0",
    info: { title: "assistant daemon API", version: VERSION },
    components: {
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "the token in the data directory's auth_token" },
        session: { type: "apiKey", in: "cookie", name: "assistant_session" },
      },
    },
    paths,
  };
}
