import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MemoryStore } from "../../src/memory/store.ts";
import { loadSqliteVec, VectorIndex } from "../../src/memory/vectorIndex.ts";
import { type Db, openDatabase } from "../../src/store/database.ts";
import { tempDataDir } from "../helpers/daemon.ts";

// The inverted-file path of the vector index (stores above 10,000 vectors): trained lists, recall against an exact
// scan, resuming an interrupted move, and training abandoned by clear().

const DIMS = 64;
const dbs: Db[] = [];
afterEach(() => {
  for (const db of dbs.splice(0)) db.close();
});

function seeded(seed: number) {
  return () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
}

/** Vectors around 60 topics, like embeddings of a person's memories: related items lie close together. */
function topicalVectors(count: number, random: () => number): number[][] {
  const topics = Array.from({ length: 60 }, () => Array.from({ length: DIMS }, () => random() - 0.5));
  return Array.from({ length: count }, () => {
    const topic = topics[Math.floor(random() * topics.length)]!;
    return topic.map((x) => x + (random() - 0.5) * 0.6);
  });
}

const cosine = (a: number[], b: number[]) => {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return dot / Math.sqrt(na * nb);
};

function bigIndex(count: number) {
  const db = openDatabase(join(tempDataDir("assistant-vectors-"), "assistant.db"));
  dbs.push(db);
  expect(loadSqliteVec(db)).toBeNull();
  const store = new MemoryStore(db);
  const index = new VectorIndex(db);
  index.prepare("test:topics", DIMS);
  const vectors = topicalVectors(count, seeded(11));
  const seqs: number[] = [];
  db.transaction(() => {
    for (let i = 0; i < count; i++) {
      seqs.push(store.upsert({ kind: "fact", content: `memory number ${i}`, origin: "learning" }).record.seq);
    }
  })();
  index.put(vectors.map((vector, i) => ({ seq: seqs[i]!, vector })));
  return { db, store, index, vectors, seqs };
}

function recallAt10(index: VectorIndex, vectors: number[][], seqs: number[], queries: number): number {
  const random = seeded(3);
  let found = 0;
  for (let q = 0; q < queries; q++) {
    const query = vectors[Math.floor(random() * vectors.length)]!.map((x) => x + (random() - 0.5) * 0.2);
    const truth = vectors
      .map((v, i) => ({ seq: seqs[i]!, similarity: cosine(v, query) }))
      .sort((a, b) => b.similarity - a.similarity)
      .slice(0, 10);
    const hits = new Set(index.search(query, 10).map((h) => h.seq));
    found += truth.filter((t) => hits.has(t.seq)).length;
  }
  return found / (queries * 10);
}

const listCount = (db: Db, where: string) =>
  (db.prepare(`SELECT COUNT(*) AS n FROM memory_vector_lists WHERE ${where}`).get() as { n: number }).n;

describe("vector index above 10,000 vectors", () => {
  it("trains lists once the store is large, keeps recall near an exact scan, and files new vectors in them", async () => {
    const { db, index, vectors, seqs, store } = bigIndex(12_000);
    expect(index.needsTraining()).toBe(true);
    // Before training the exact scan answers: the item's own vector finds it first.
    expect(index.search(vectors[42]!, 1)[0]!.seq).toBe(seqs[42]);

    await index.train();
    expect(index.needsTraining()).toBe(false);
    expect(index.meta).toMatchObject({ trained_at: 12_000 });
    expect(index.meta?.moved_through).toBeUndefined();
    // Every vector is in a trained list, except the few farthest from every centroid, in the open list.
    expect(listCount(db, "list NOT BETWEEN -1 AND 127")).toBe(0);
    const open = listCount(db, "list = -1");
    expect(open).toBeGreaterThan(0);
    expect(open).toBeLessThan(12_000 * 0.06);
    expect(recallAt10(index, vectors, seqs, 40)).toBeGreaterThanOrEqual(0.9);
    expect(index.search(vectors[42]!, 1)[0]).toMatchObject({ seq: seqs[42] });

    // A vector stored after training is filed in a list (an outlier: the open list) and found.
    const fresh = store.upsert({ kind: "fact", content: "a memory stored later", origin: "tool" }).record.seq;
    const vector = vectors[7]!.map((x) => -x);
    index.put([{ seq: fresh, vector }]);
    expect(listCount(db, `seq = ${fresh} AND list = -1`)).toBe(1);
    expect(index.search(vector, 1)[0]).toMatchObject({ seq: fresh });
    expect(index.search(vector, 1)[0]!.similarity).toBeCloseTo(1, 5);
    const typical = store.upsert({ kind: "fact", content: "a typical memory stored later", origin: "tool" }).record.seq;
    index.put([{ seq: typical, vector: vectors[8]! }]);
    expect(listCount(db, `seq = ${typical} AND list BETWEEN 0 AND 127`)).toBe(1);
    expect(index.search(vectors[8]!, 2).map((h) => h.seq)).toContain(typical);
  });

  it("resumes a move to new lists that a stop interrupted, answering exactly meanwhile", async () => {
    const { db, index, vectors, seqs } = bigIndex(12_000);
    const stop = new AbortController();
    const watch = setInterval(() => {
      if ((index.meta?.moved_through ?? 0) > 0) stop.abort();
    }, 0);
    await expect(index.train(stop.signal)).rejects.toThrow();
    clearInterval(watch);
    const movedThrough = index.meta?.moved_through ?? 0;
    expect(movedThrough).toBeGreaterThan(0);
    expect(movedThrough).toBeLessThan(seqs.at(-1)!);
    // Not yet moved: still in the open list, where every vector was before the first training.
    expect(listCount(db, `seq > ${movedThrough} AND list = -1`)).toBe(12_000 - movedThrough);

    // The next start: the index sees the unfinished move, answers with the exact scan, then finishes the move.
    const reopened = new VectorIndex(db);
    expect(reopened.needsTraining()).toBe(true);
    expect(reopened.search(vectors[9]!, 1)[0]).toMatchObject({ seq: seqs[9] });
    await reopened.train();
    expect(reopened.meta).toMatchObject({ trained_at: 12_000 });
    expect(reopened.meta?.moved_through).toBeUndefined();
    expect(listCount(db, "list = -1")).toBeLessThan(12_000 * 0.06);
    expect(recallAt10(reopened, vectors, seqs, 20)).toBeGreaterThanOrEqual(0.9);
  });

  it("drops a training that clear() overtook", async () => {
    const { db, index, store } = bigIndex(12_000);
    const training = index.train();
    store.clear();
    index.clear();
    await training;
    expect(index.meta).toEqual({ embedder: "test:topics", dims: DIMS });
    expect(db.prepare("SELECT COUNT(*) AS n FROM memory_vector_centroids").get()).toEqual({ n: 0 });
    expect(index.needsTraining()).toBe(false);
    expect(
      index.search(
        Array.from({ length: DIMS }, () => 1),
        5,
      ),
    ).toEqual([]);
  });
});
