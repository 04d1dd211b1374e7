import type { MemoryOverview, MemorySettings } from "./memoryService.ts";
import type { SearchHit } from "./search.ts";
import type { MemoryRecord } from "./store.ts";

// Memories as text, for `assistant memory`.

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 3)}...` : text);

export function formatMemory(memory: MemoryRecord): string {
  const subject = memory.subject ? ` [${memory.subject}]` : "";
  return `${memory.id}  ${memory.kind}${subject}  ${memory.updated_at.slice(0, 10)}\n    ${clip(memory.content, 200)}`;
}

export function formatOverview(overview: MemoryOverview): string {
  const kinds = Object.entries(overview.by_kind)
    .map(([kind, n]) => `${kind} ${n}`)
    .join(", ");
  const vectors = overview.vectors.embedder
    ? `${overview.vectors.embedded} embedded by ${overview.vectors.embedder}` +
      `${overview.vectors.pending > 0 ? `, ${overview.vectors.pending} waiting` : ""}` +
      `${overview.vectors.search ? ` (search: ${overview.vectors.search})` : ""}`
    : "none (text search only)";
  const lines = [
    `Learning: ${overview.learning_enabled ? "on" : "paused"}${overview.last_learned_at ? `, last learned ${overview.last_learned_at}` : ""}`,
    `Memories: ${overview.total} (${kinds}), ${(overview.size_bytes / 1024).toFixed(1)} KiB`,
    `Vectors: ${vectors}`,
  ];
  if (overview.recent.length > 0) lines.push("Recent:", ...overview.recent.map(formatMemory));
  else if (overview.total === 0) {
    lines.push('Nothing remembered yet. Chat with learning on, or: assistant memory remember "<a fact about you>"');
  }
  return lines.join("\n");
}

export function formatHits(hits: SearchHit[]): string {
  if (hits.length === 0) return "No memory matches.";
  return hits
    .map((hit) => {
      const similarity = hit.similarity === null ? "" : `, similarity ${hit.similarity.toFixed(2)}`;
      return `${formatMemory(hit.memory)}\n    matched: ${hit.matched.join(", ")} (score ${hit.score.toFixed(2)}${similarity})`;
    })
    .join("\n");
}

export function formatSettings(settings: MemorySettings): string {
  const { embeddings } = settings;
  return [
    `Learning: ${settings.learning_enabled ? "on" : "paused"}`,
    `Graph expansion: ${settings.graph_expand ? "on" : "off"}`,
    `Embeddings: ${embeddings.configured} -> ${embeddings.status === "vectors" ? `vectors from ${embeddings.embedder}` : "text search only"}${embeddings.reason ? ` (${embeddings.reason})` : ""}`,
  ].join("\n");
}
