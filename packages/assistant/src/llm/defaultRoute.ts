import { z } from "zod";
import { ROUTE_PROVIDERS } from "../config/schemas/llmRouter.ts";

// The route a `conversation` without an entry in llm_router.yaml uses (docs/models.md). One constant for
// the router engine and the route editor, so what `config models routes` shows is what the engine does.

export const routeTargetRefSchema = z
  .object({ provider: z.enum(ROUTE_PROVIDERS), model: z.string() })
  .meta({ id: "RouteTarget" });

export type RouteTargetRef = Readonly<z.infer<typeof routeTargetRefSchema>>;

export interface RouteRef {
  readonly primary: RouteTargetRef;
  readonly fallback: readonly RouteTargetRef[];
}

export const DEFAULT_CONVERSATION_ROUTE: RouteRef = Object.freeze({
  primary: Object.freeze({ provider: "assistant_embedded", model: "default" }),
  fallback: Object.freeze([Object.freeze({ provider: "assistant_core", model: "core" })]),
});
