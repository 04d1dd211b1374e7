import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseExtraction } from "../../src/memory/extraction.ts";
import { ftsQuery, searchMemories } from "../../src/memory/search.ts";
import { MemoryStore } from "../../src/memory/store.ts";
import { loadSqliteVec, VectorIndex } from "../../src/memory/vectorIndex.ts";
import { type Db, openDatabase } from "../../src/store/database.ts";
import { tempDataDir } from "../helpers/daemon.ts";
import { bagOfWordsVector } from "../llm/servers/openaiServer.ts";

const dbs: Db[] = [];
afterEach(() => {
  for (const db of dbs.splice(0)) db.close();
});

function freshStore(): { db: Db; store: MemoryStore } {
  const db = openDatabase(join(tempDataDir("assistant-memory-"), "assistant.db"));
  dbs.push(db);
  return { db, store: new MemoryStore(db) };
}

const WORDS =
  "blue folder passport number stored kitchen drawer green car keys office desk red notebook garden shed " +
  "train ticket sister brother lyon paris coffee tea morning evening project apollo budget meeting friday";

describe("memory store", () => {
  it("dedupes the same content and replaces an item of the same kind and subject", () => {
    const { store } = freshStore();
    const first = store.upsert({ kind: "preference", content: "The user drinks coffee black.", origin: "learning" });
    const again = store.upsert({ kind: "preference", content: "the user drinks COFFEE black", origin: "learning" });
    expect(first.action).toBe("created");
    expect(again.action).toBe("updated");
    expect(again.record.id).toBe(first.record.id);
    expect(again.record.times_seen).toBe(2);

    const colour = store.upsert({
      kind: "preference",
      subject: "colour",
      content: "Favourite colour is blue.",
      origin: "tool",
    });
    const changed = store.upsert({
      kind: "preference",
      subject: "Colour",
      content: "Favourite colour is green.",
      origin: "tool",
    });
    expect(changed.record.id).toBe(colour.record.id);
    expect(changed.record.content).toBe("Favourite colour is green.");
    expect(store.counts().total).toBe(2);
    // The text index follows the update: the old wording is gone.
    expect(store.searchText('"blue"', 10)).toEqual([]);
    expect(store.searchText('"green"', 10)).toEqual([changed.record.seq]);
  });

  it("refuses content without words", () => {
    const { store } = freshStore();
    expect(() => store.upsert({ kind: "fact", content: " ?! ", origin: "tool" })).toThrow(/needs some words/);
  });

  it("ranks the exact match first in a store of 10,000 items, with and without vectors", () => {
    const { db, store } = freshStore();
    expect(loadSqliteVec(db)).toBeNull();
    const index = new VectorIndex(db);
    index.prepare("test:bag", 64);
    const words = WORDS.split(" ");
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const target = "The passport number is stored in the blue folder in the kitchen drawer.";
    const vectors: Array<{ seq: number; vector: number[] }> = [];
    db.transaction(() => {
      for (let i = 0; i < 10_000; i++) {
        // Decoys share the target's words in other orders.
        const sentence = Array.from({ length: 8 }, () => words[Math.floor(random() * words.length)]).join(" ");
        const content = i === 6_123 ? target : `${sentence} ${i}`;
        const { record } = store.upsert({ kind: "fact", content, origin: "learning" });
        vectors.push({ seq: record.seq, vector: bagOfWordsVector(content) });
      }
    })();
    index.put(vectors);
    expect(store.counts()).toMatchObject({ total: 10_000, vectors: 10_000 });

    const query = "passport number is stored in the blue folder in the kitchen drawer";
    const textOnly = searchMemories(store, query, { limit: 5, vectorHits: null, graphExpand: false });
    expect(textOnly[0]!.memory.content).toBe(target);
    expect(textOnly[0]!.matched).toContain("exact");

    const hybrid = searchMemories(store, query, {
      limit: 5,
      vectorHits: index.search(bagOfWordsVector(query), 50),
      graphExpand: false,
    });
    expect(hybrid[0]!.memory.content).toBe(target);
    expect(hybrid[0]!.matched).toEqual(expect.arrayContaining(["text", "vector", "exact"]));
    expect(hybrid[0]!.similarity).toBeGreaterThan(0.9);
  });

  it("finds by meaning alone through vectors when no word matches the text index", () => {
    const { db, store } = freshStore();
    loadSqliteVec(db);
    const index = new VectorIndex(db);
    index.prepare("test:bag", 64);
    const a = store.upsert({ kind: "fact", content: "Keys hang by the garden shed", origin: "tool" }).record;
    const b = store.upsert({ kind: "fact", content: "Train ticket in the red notebook", origin: "tool" }).record;
    index.put([
      { seq: a.seq, vector: bagOfWordsVector(a.content) },
      { seq: b.seq, vector: bagOfWordsVector(b.content) },
    ]);
    // "sheds" is not "shed" for the text index; the stopword-only query has no text terms at all.
    const hits = searchMemories(store, "the", {
      limit: 2,
      vectorHits: index.search(bagOfWordsVector("keys garden shed"), 10),
      graphExpand: false,
    });
    expect(hits[0]!.memory.id).toBe(a.id);
    expect(hits[0]!.matched).toEqual(["vector"]);
  });

  it("expands to linked items only when graph expansion is on", () => {
    const { store } = freshStore();
    const alice = store.upsert({
      kind: "person",
      subject: "Alice",
      content: "Alice is the user's sister.",
      origin: "tool",
    });
    const lives = store.upsert({ kind: "fact", content: "Alice lives in Lyon.", origin: "tool" });
    store.link(lives.record.seq, alice.record.seq, "Alice");
    const plain = searchMemories(store, "my sister", { limit: 5, vectorHits: null, graphExpand: false });
    expect(plain.map((h) => h.memory.content)).toEqual(["Alice is the user's sister."]);
    const expanded = searchMemories(store, "my sister", { limit: 5, vectorHits: null, graphExpand: true });
    expect(expanded.map((h) => h.memory.content)).toEqual(["Alice is the user's sister.", "Alice lives in Lyon."]);
    expect(expanded[1]!.matched).toEqual(["linked"]);
  });

  it("clear empties the store, the text index and the links", () => {
    const { store } = freshStore();
    const a = store.upsert({ kind: "person", subject: "Bob", content: "Bob is a colleague.", origin: "tool" }).record;
    const b = store.upsert({ kind: "fact", content: "Bob likes tea.", origin: "tool" }).record;
    store.link(a.seq, b.seq, "Bob");
    expect(store.clear()).toBe(2);
    expect(store.counts().total).toBe(0);
    expect(store.searchText('"bob"', 10)).toEqual([]);
    expect(store.linked([a.seq, b.seq], 10)).toEqual([]);
  });
});

describe("memory queries and extraction answers", () => {
  it("turns hostile text into a safe FTS query", () => {
    const { store } = freshStore();
    store.upsert({ kind: "fact", content: "Near the blue door", origin: "tool" });
    for (const text of ["NEAR(blue door)", '"unbalanced', "blue* OR -door", "col:blue", "AND OR NOT", "😀 ''"]) {
      const query = ftsQuery(text);
      if (query) expect(() => store.searchText(query, 5)).not.toThrow();
    }
    expect(ftsQuery("the and of")).toBeNull();
    expect(ftsQuery('NEAR(blue "door")')).toBe('"near" OR "blue" OR "door"');
  });

  it("reads the model's JSON leniently and each item strictly", () => {
    const answer =
      'Sure!\n```json\n{"memories": [{"kind": "person", "subject": "Alice", "content": "Alice is the user\'s sister."},' +
      ' {"kind": "opinion", "content": "not a kind"}, {"kind": "fact", "content": "x"}, {"kind": "fact", "content": "Lives in Lyon."}]}\n```';
    expect(parseExtraction(answer)).toEqual([
      { kind: "person", subject: "Alice", content: "Alice is the user's sister." },
      { kind: "fact", subject: null, content: "Lives in Lyon." },
    ]);
    expect(parseExtraction("no json here")).toEqual([]);
    expect(parseExtraction('{"memories": "nope"}')).toEqual([]);
    expect(parseExtraction("{broken")).toEqual([]);
  });
});
