import type { LlmRouterConfig, ModelOptions, RouteProvider } from "../config/schemas/llmRouter.ts";
import { type Price, priceFor } from "./prices.ts";

// `assistant router show <MODEL>`: what the router file says about one model.

export interface ModelDetails {
  model: string;
  options: ModelOptions | null;
  price: Price | null;
  routes: Array<{ category: string; role: "primary" | "fallback"; provider: RouteProvider }>;
}

export function describeModel(config: LlmRouterConfig, model: string): ModelDetails {
  const routes: ModelDetails["routes"] = [];
  for (const [category, route] of Object.entries(config.task_types)) {
    if (route.primary.model === model) routes.push({ category, role: "primary", provider: route.primary.provider });
    for (const target of route.fallback) {
      if (target.model === model) routes.push({ category, role: "fallback", provider: target.provider });
    }
  }
  const provider = routes[0]?.provider ?? "cloud_a";
  return {
    model,
    options: config.model_options[model] ?? null,
    price: priceFor(provider, model, config.model_options),
    routes,
  };
}
