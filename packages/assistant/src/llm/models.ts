import { z } from "zod";
import { type ModelOptions, ROUTE_PROVIDERS, type RouteProvider } from "../config/schemas/llmRouter.ts";
import type { LlmRouter } from "./router.ts";
import { modelInfoSchema } from "./types.ts";

// Every model of every configured provider (`/models`, GET /api/router/models, `config models fetch`). Providers
// are asked in parallel with a deadline, so one unreachable server cannot hold the list; its error is reported
// next to the others' models.

export const providerModelsSchema = z
  .object({ provider: z.enum(ROUTE_PROVIDERS), models: z.array(modelInfoSchema), error: z.string().nullable() })
  .meta({ id: "ProviderModels" });

export type ProviderModels = z.infer<typeof providerModelsSchema>;

const LIST_TIMEOUT_MS = 5_000;

/** The built-in providers, the ones configured under `providers`, and any a route names. */
export function configuredProviders(router: LlmRouter): RouteProvider[] {
  const config = router.configuration;
  const ids = new Set<RouteProvider>(["assistant_embedded", "assistant_core"]);
  for (const id of Object.keys(config.providers) as RouteProvider[]) ids.add(id);
  for (const route of Object.values(config.task_types)) {
    for (const target of [route.primary, ...route.fallback]) ids.add(target.provider);
  }
  return [...ids];
}

export async function listAllModels(router: LlmRouter, timeoutMs = LIST_TIMEOUT_MS): Promise<ProviderModels[]> {
  const options = router.configuration.model_options;
  return await Promise.all(
    configuredProviders(router).map(async (id): Promise<ProviderModels> => {
      try {
        const provider = await router.provider(id);
        const models = await provider.listModels(AbortSignal.timeout(timeoutMs));
        // What the file already knows (from an earlier fetch or by hand) fills what the provider did not say.
        const merged = models.map((m) => ({ ...m, options: { ...options[m.model], ...m.options } }));
        return { provider: id, models: merged, error: null };
      } catch (error) {
        return { provider: id, models: [], error: error instanceof Error ? error.message : String(error) };
      }
    }),
  );
}

/** The metadata to store under `model_options` (`config models fetch`): models with something to say. */
export function modelOptionsFrom(lists: ProviderModels[]): Record<string, ModelOptions> {
  const result: Record<string, ModelOptions> = {};
  for (const list of lists) {
    if (list.provider === "assistant_core") continue;
    for (const model of list.models) {
      if (Object.keys(model.options).length > 0) result[model.model] = model.options;
    }
  }
  return result;
}
