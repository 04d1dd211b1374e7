import type { FastifyInstance } from "fastify";
import type { z } from "zod";
import type { Logger } from "../log/logger.ts";
import { AppError } from "../util/errors.ts";
import { answerProblem } from "./answerCheck.ts";
import { errorBody } from "./errors.ts";
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

export interface RegisterOptions {
  /**
   * Test runs only (ASSISTANT_VALIDATE_RESPONSES=1): every answer is checked against what its route declares
   * (answerCheck.ts); one that does not match becomes a 500 naming the problem, and a log line.
   */
  checkAnswers?: Pick<Logger, "error">;
}

/** Registers declared routes: requests are validated against their zod schemas before the handler runs. */
export function registerRoutes(app: FastifyInstance, routes: RouteSpec[], options: RegisterOptions = {}): void {
  const logger = options.checkAnswers;
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
      ...(logger
        ? {
            onSend: async (request, reply, payload) => {
              if (request.method === "HEAD") return payload;
              const problem = answerProblem(route, reply.statusCode, payload);
              if (!problem) return payload;
              logger.error("response contract broken", {
                route: `${route.method} ${route.url}`,
                status: reply.statusCode,
                problem,
              });
              reply.code(500).type("application/json; charset=utf-8");
              const error = new AppError("internal", `the answer does not match its declaration: ${problem}`);
              return JSON.stringify(errorBody(error));
            },
          }
        : {}),
    });
  }
}
