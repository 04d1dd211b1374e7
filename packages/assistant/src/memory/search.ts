import { z } from "zod";
import { type MemoryKind, type MemoryStore, memoryRecordSchema, normalise } from "./store.ts";
import type { VectorHit } from "./vectorIndex.ts";

// Hybrid retrieval: BM25 over the text index, nearest vectors (when an embedder is available), recency, and
// (ASSISTANT_GRAPH_EXPAND=1) the items linked to the best hits. An item that contains the whole query wins over
// items that only share words with it, so asking for something exact finds it first however large the store.

const TEXT_POOL = 50;
const PHRASE_POOL = 10;
/** Items the BM25 query may have to score at most (the sum of its words' document counts). */
const POSTINGS_BUDGET = 10_000;
const VECTOR_POOL = 50;
const EXPAND_FROM = 5;
const EXPAND_LIMIT = 20;
const RECENCY_DAYS = 30;
const MAX_TERMS = 16;

/** Words too common to search for (English and French). */
const STOPWORDS = new Set(
  (
    "a an and are as at be but by do does did for from has have how i in is it its me my of on or our so that the " +
    "their them then there these they this to was we were what when where which who why will with you your " +
    "au aux avec ce ces dans de des du elle en est et il je la le les leur ma mais me mes mon ne nous on ou par " +
    "pas pour qu que qui sa se ses son sur ta te tes ton tu un une vos votre vous"
  ).split(" "),
);

export const searchHitSchema = z
  .object({
    memory: memoryRecordSchema,
    score: z.number(),
    /** Why it was found: text match, vector similarity, exact phrase, linked to another hit. */
    matched: z.array(z.enum(["text", "vector", "exact", "linked"])),
    similarity: z.number().nullable(),
  })
  .meta({ id: "MemorySearchHit" });

export type SearchHit = z.infer<typeof searchHitSchema>;

export interface SearchOptions {
  limit: number;
  kinds?: readonly MemoryKind[];
  /** Vector hits of the query (already computed), or null without an embedder. */
  vectorHits: VectorHit[] | null;
  graphExpand: boolean;
  now?: Date;
}

/** The significant words of a text, normalised like the text index does, at most MAX_TERMS. */
function significantWords(text: string): string[] {
  const words = normalise(text)
    .split(" ")
    .filter((w) => w.length > 1 && !STOPWORDS.has(w));
  return [...new Set(words)].slice(0, MAX_TERMS);
}

/** The FTS5 query for free text: each significant word quoted (no operator can be injected), OR-ed. */
export function ftsQuery(text: string): string | null {
  const words = significantWords(text);
  return words.length > 0 ? words.map((w) => `"${w}"`).join(" OR ") : null;
}

/**
 * Text candidates, best first: items holding the whole query as a phrase, then BM25 over the query's words.
 * Ranking must score every item that holds a word, so the most common words are left out once the rarer ones
 * already cover POSTINGS_BUDGET items: they would cost most and tell least.
 */
function textCandidates(store: MemoryStore, query: string): number[] {
  const words = significantWords(query);
  if (words.length === 0) return [];
  const phrase = normalise(query).split(" ").filter(Boolean);
  const exact = phrase.length >= 2 ? store.searchText(`"${phrase.join(" ")}"`, PHRASE_POOL) : [];
  const counted = words
    .map((word) => ({ word, docs: store.documentFrequency(word) }))
    .filter((w) => w.docs > 0)
    .sort((a, b) => a.docs - b.docs);
  const kept: string[] = [];
  let postings = 0;
  for (const { word, docs } of counted) {
    if (kept.length > 0 && postings + docs > POSTINGS_BUDGET) break;
    kept.push(word);
    postings += docs;
  }
  const ranked = kept.length > 0 ? store.searchText(kept.map((w) => `"${w}"`).join(" OR "), TEXT_POOL) : [];
  return [...new Set([...exact, ...ranked])];
}

export function searchMemories(store: MemoryStore, query: string, options: SearchOptions): SearchHit[] {
  const now = (options.now ?? new Date()).getTime();
  const textSeqs = textCandidates(store, query);
  const textRank = new Map(textSeqs.map((seq, i) => [seq, i]));
  const vectorSim = new Map((options.vectorHits ?? []).slice(0, VECTOR_POOL).map((h) => [h.seq, h.similarity]));
  const seqs = [...new Set([...textSeqs, ...vectorSim.keys()])];
  const wanted = options.kinds && options.kinds.length > 0 ? new Set(options.kinds) : null;
  const phrase = normalise(query);
  const exactWorthy = phrase.length >= 4;

  const scored = new Map<number, SearchHit>();
  for (const memory of store.bySeqs(seqs)) {
    if (wanted && !wanted.has(memory.kind)) continue;
    const matched: SearchHit["matched"] = [];
    let score = 0;
    const rank = textRank.get(memory.seq);
    if (rank !== undefined) {
      matched.push("text");
      score += 0.6 * (1 - (0.5 * rank) / Math.max(1, textSeqs.length));
    }
    const similarity = vectorSim.get(memory.seq) ?? null;
    if (similarity !== null) {
      matched.push("vector");
      score += 0.4 * Math.max(0, similarity);
    }
    if (exactWorthy) {
      const content = normalise(memory.content);
      if (content === phrase) score += 2;
      else if (` ${content} `.includes(` ${phrase} `)) score += 1;
      if (content.includes(phrase)) matched.push("exact");
    }
    const ageDays = Math.max(0, now - Date.parse(memory.updated_at)) / 86_400_000;
    score += 0.1 * Math.exp(-ageDays / RECENCY_DAYS);
    scored.set(memory.seq, { memory, score, matched, similarity });
  }

  if (options.graphExpand && scored.size > 0) {
    const best = [...scored.values()].sort((a, b) => b.score - a.score).slice(0, EXPAND_FROM);
    const parentScore = new Map(best.map((h) => [h.memory.seq, h.score]));
    const links = store.linked([...parentScore.keys()], EXPAND_LIMIT);
    const linkedScore = new Map<number, number>();
    for (const link of links) {
      const value = 0.5 * (parentScore.get(link.from) ?? 0);
      linkedScore.set(link.seq, Math.max(linkedScore.get(link.seq) ?? 0, value));
    }
    for (const memory of store.bySeqs([...linkedScore.keys()])) {
      if (wanted && !wanted.has(memory.kind)) continue;
      const existing = scored.get(memory.seq);
      const value = linkedScore.get(memory.seq) ?? 0;
      if (existing) {
        if (!existing.matched.includes("linked")) existing.matched.push("linked");
        existing.score = Math.max(existing.score, value);
      } else {
        scored.set(memory.seq, { memory, score: value, matched: ["linked"], similarity: null });
      }
    }
  }
  return [...scored.values()].sort((a, b) => b.score - a.score || b.memory.seq - a.memory.seq).slice(0, options.limit);
}
