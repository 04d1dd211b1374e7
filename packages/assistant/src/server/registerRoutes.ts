import type { FastifyInstance } from "fastify";
import type { z } from "zod";
import { AppError } from "../util/errors.ts";
import type { RouteSpec } from "./route.ts";

function validate<T>(schema: z.ZodType<T> | undefined, value: unknown, where: "params" | "query" | "body"): T {
  if (!schema) return undefined as T;
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = [where, ...issue.path.map(String)].join(".");
  const what = value === undefined && where === "body" ? "a JSON body is required" : issue.message;
  throw new AppError("invalid_request", `${field}: ${what}`, {
    field,
    issues: result.error.issues.map((i) => ({ path: [where, ...i.path.map(String)].join("."), message: i.message })),
  });
}

/** Registers declared routes: requests are validated against their zod schemas before the handler runs. */
export function registerRoutes(app: FastifyInstance, routes: RouteSpec[]): void {
  for (const route of routes) {
    app.route({
      method: route.method,
      url: route.url,
      config: { auth: route.auth ?? "token" },
      handler: async (request, reply) => {
        const input = {
          params: validate(route.params, request.params, "params"),
          query: validate(route.query, request.query, "query"),
          body: validate(route.body, request.body, "body"),
        };
        const result = await route.handler(input, request, reply);
        if (route.raw || reply.sent) return reply;
        if (route.status) reply.status(route.status);
        return result;
      },
    });
  }
}
