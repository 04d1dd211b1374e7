import { ROUTE_PROVIDERS, type RouteProvider } from "../config/schemas/llmRouter.ts";
import type { LlmRouter } from "../llm/router.ts";
import { ConfigError } from "../util/errors.ts";

// Which model turns memories into vectors (ASSISTANT_MEMORY_EMBEDDINGS):
//   auto (default)      the embedded model when its file is on disk (never a download just for memory), else none
//   off                 text search only
//   <provider>:<model>  any provider with an embeddings API (assistant_embedded:default, lowbit_server:<model>,
//                       local_server:<model>, cloud_a:<model>, cloud_b:<model>)
// A cloud provider receives the memory text it embeds, so it is used only when named here, and never in degraded
// mode (ASSISTANT_DEGRADED_MODE=1 keeps everything on local providers).

export interface Embedder {
  /** `<provider>:<model>`; vectors of different embedders are never compared. */
  id: string;
  embed(texts: readonly string[], signal?: AbortSignal): Promise<number[][]>;
}

export type EmbedderChoice =
  | { kind: "auto" }
  | { kind: "off" }
  | { kind: "named"; provider: RouteProvider; model: string };

export function embedderChoice(env: NodeJS.ProcessEnv): EmbedderChoice {
  const raw = env.ASSISTANT_MEMORY_EMBEDDINGS?.trim() ?? "";
  if (raw === "" || raw === "auto") return { kind: "auto" };
  if (raw === "off" || raw === "none") return { kind: "off" };
  const at = raw.indexOf(":");
  const provider = raw.slice(0, at);
  const model = raw.slice(at + 1).trim();
  if (
    at <= 0 ||
    !model ||
    !(ROUTE_PROVIDERS as readonly string[]).includes(provider) ||
    provider === "assistant_core"
  ) {
    throw new ConfigError(
      "environment",
      "ASSISTANT_MEMORY_EMBEDDINGS",
      `must be auto, off or <provider>:<model> with a provider of ${ROUTE_PROVIDERS.filter((p) => p !== "assistant_core").join(", ")} (got "${raw}")`,
    );
  }
  return { kind: "named", provider: provider as RouteProvider, model };
}

/** The embedder to use now, or null with the reason (text search alone then). */
export async function resolveEmbedder(
  choice: EmbedderChoice,
  router: Pick<LlmRouter, "provider" | "limits">,
  embeddedPresent: () => boolean,
): Promise<{ embedder: Embedder | null; reason: string | null }> {
  if (choice.kind === "off") return { embedder: null, reason: "ASSISTANT_MEMORY_EMBEDDINGS=off" };
  const target =
    choice.kind === "named" ? choice : { provider: "assistant_embedded" as RouteProvider, model: "default" };
  if (choice.kind === "auto" && !embeddedPresent()) {
    return {
      embedder: null,
      reason: "the embedded model is not downloaded; set ASSISTANT_MEMORY_EMBEDDINGS to use another",
    };
  }
  const provider = await router.provider(target.provider);
  if (!provider.embed) return { embedder: null, reason: `${target.provider} offers no embeddings` };
  if (!provider.local && router.limits.degraded) {
    return { embedder: null, reason: `${target.provider} is a cloud provider and ASSISTANT_DEGRADED_MODE=1` };
  }
  const embed = provider.embed.bind(provider);
  return {
    embedder: {
      id: `${target.provider}:${target.model}`,
      embed: (texts, signal) => embed(target.model, texts, signal),
    },
    reason: null,
  };
}
