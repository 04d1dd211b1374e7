import { z } from "zod";
import { budgetStatusSchema } from "../../llm/budget.ts";
import type { Services } from "../../runtime/services.ts";
import { defineRoute, type RouteSpec } from "../route.ts";

// Token budget controls (docs/models.md#metrics-and-budget): limits per chat session and the usage so far.

const limit = (max: number) => z.number().positive().max(max).nullable().optional();

export function budgetRoutes(services: Services): RouteSpec[] {
  const { budget } = services.llm;
  return [
    defineRoute({
      method: "GET",
      url: "/api/budget",
      operationId: "getBudget",
      summary: "Session limits (tokens, cost) with their source, and usage per session",
      tag: "budget",
      response: budgetStatusSchema,
      handler: () => budget.status(),
    }),
    defineRoute({
      method: "POST",
      url: "/api/budget",
      operationId: "setBudgetLimits",
      summary: "Sets session limits; null clears a limit set here (the environment's applies again)",
      tag: "budget",
      response: budgetStatusSchema,
      body: z
        .strictObject({
          max_tokens_per_session: limit(2_147_483_647).refine(
            (v) => v == null || Number.isInteger(v),
            "expected a whole number",
          ),
          max_cost_per_session_usd: limit(1_000_000),
        })
        .refine((b) => Object.keys(b).length > 0, "set max_tokens_per_session or max_cost_per_session_usd"),
      handler: ({ body }) => budget.setLimits(body),
    }),
    defineRoute({
      method: "POST",
      url: "/api/budget/reset-session",
      operationId: "resetBudgetUsage",
      summary: "Forgets the usage of one session (session_id) or of every session",
      tag: "budget",
      body: z.strictObject({ session_id: z.string().min(1).max(128).optional() }).optional(),
      response: z.object({ reset: z.number() }),
      handler: ({ body }) => ({ reset: budget.resetSession(body?.session_id) }),
    }),
  ];
}
