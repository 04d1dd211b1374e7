import type { EmbedderChoice } from "../config/envVariables.ts";
import type { RouteProvider } from "../config/schemas/llmRouter.ts";
import type { LlmRouter } from "../llm/router.ts";

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
