import type { Memory, MemorySearchHit } from "@assistant/client";
import { useMessages } from "../i18n.ts";
import { Markdown } from "../Markdown.tsx";

export const MEMORY_KINDS = ["fact", "preference", "person", "project", "decision"] as const;
export type MemoryKind = (typeof MEMORY_KINDS)[number];

/**
 * One memory: its text (learned from conversations, so rendered as Markdown with raw HTML as text), kind,
 * subject, and for a search hit the score and why it matched, exactly as the daemon ranked it.
 */
export function MemoryItem(props: { memory: Memory; hit?: MemorySearchHit; onForget: (memory: Memory) => void }) {
  const t = useMessages();
  const { memory, hit } = props;
  return (
    <li className="memory-item">
      <div className="memory-meta">
        <span className="tag">{t.memKinds[memory.kind]}</span>
        {memory.subject && <strong>{memory.subject}</strong>}
        {hit && (
          <span className="why" data-testid="memory-score">
            {t.memScore} {hit.score.toFixed(3)} · {t.memMatched}{" "}
            {hit.matched.map((how) => t.memMatchedBy[how]).join(", ") || "—"}
            {hit.similarity !== null ? ` · ${t.memSimilarity} ${hit.similarity.toFixed(3)}` : ""}
          </span>
        )}
        <span className="muted">
          {t.memSeen(memory.times_seen)} · {new Date(memory.updated_at).toLocaleString()}
        </span>
      </div>
      <div className="memory-content">
        <Markdown text={memory.content} />
      </div>
      <button
        type="button"
        onClick={() => props.onForget(memory)}
        aria-label={`${t.memForget}: ${memory.content.slice(0, 80)}`}
      >
        {t.memForget}
      </button>
    </li>
  );
}
