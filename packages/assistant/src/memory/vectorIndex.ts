import { createRequire } from "node:module";
import { type Db, statement } from "../store/database.ts";

// Vector search over memories with sqlite-vec. Float embeddings live in memory_vectors (a plain table, so point
// reads are cheap); the nearest-neighbour scan runs on their sign bits in a vec0 bit[] table (a Hamming scan of
// 100,000 rows takes a few milliseconds where a float scan takes tens), and the best candidates are re-ranked by
// exact cosine distance. The bit table is sized by the embedder, so it is made at run time, not in a migration.

const BITS_TABLE = "memory_vec_bits";
const SETTINGS_KEY = "memory.vectors";
/** Candidates from the bit scan that get an exact distance. */
const RERANK_POOL = 200;

export interface VectorHit {
  seq: number;
  /** Cosine similarity, -1..1. */
  similarity: number;
}

interface IndexMeta {
  embedder: string;
  dims: number;
}

/** Loads the sqlite-vec extension into `db`; the reason when this platform has no build of it. */
export function loadSqliteVec(db: Db): string | null {
  try {
    const require = createRequire(import.meta.url);
    (require("sqlite-vec") as { load(db: Db): void }).load(db);
    return null;
  } catch (error) {
    return `sqlite-vec cannot be loaded: ${(error as Error).message}`;
  }
}

export class VectorIndex {
  readonly #db: Db;
  #meta: IndexMeta | null;

  constructor(db: Db) {
    this.#db = db;
    const row = statement(this.#db, "SELECT value FROM settings WHERE key = ?").get(SETTINGS_KEY) as
      | { value: string }
      | undefined;
    this.#meta = row ? (JSON.parse(row.value) as IndexMeta) : null;
  }

  /** Which embedder (and dimension) the stored vectors come from. */
  get meta(): IndexMeta | null {
    return this.#meta;
  }

  /**
   * Makes the index hold vectors of `embedder` with `dims`: vectors of another embedder cannot be compared with
   * its queries, so they are dropped and every memory is embedded again.
   */
  prepare(embedder: string, dims: number): void {
    if (this.#meta?.embedder === embedder && this.#meta.dims === dims) return;
    this.#db.transaction(() => {
      this.#db.exec(`DROP TABLE IF EXISTS ${BITS_TABLE}`);
      this.#db.exec(`CREATE VIRTUAL TABLE ${BITS_TABLE} USING vec0(embedding bit[${paddedBits(dims)}])`);
      statement(this.#db, "DELETE FROM memory_vectors").run();
      statement(this.#db, "UPDATE memories SET vector_dims = NULL").run();
      statement(
        this.#db,
        "INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
      ).run(SETTINGS_KEY, JSON.stringify({ embedder, dims }), new Date().toISOString());
    })();
    this.#meta = { embedder, dims };
  }

  /** Stores the vectors of a batch of memories (in one transaction). */
  put(items: ReadonlyArray<{ seq: number; vector: readonly number[] }>): void {
    const meta = this.#meta;
    if (!meta) throw new Error("the vector index is not prepared");
    const bits = paddedBits(meta.dims);
    this.#db.transaction(() => {
      for (const { seq, vector } of items) {
        if (vector.length !== meta.dims) continue; // a malformed answer: the item stays unembedded
        const floats = Buffer.from(new Float32Array(vector).buffer);
        const padded = Buffer.from(new Float32Array([...vector, ...new Array(bits - vector.length).fill(0)]).buffer);
        // The memory may have been forgotten while it was being embedded.
        const exists = statement(this.#db, "UPDATE memories SET vector_dims = ? WHERE seq = ?").run(meta.dims, seq);
        if (exists.changes === 0) continue;
        statement(this.#db, "INSERT OR REPLACE INTO memory_vectors (seq, embedding) VALUES (?, ?)").run(seq, floats);
        statement(this.#db, `DELETE FROM ${BITS_TABLE} WHERE rowid = ?`).run(BigInt(seq));
        statement(
          this.#db,
          `INSERT INTO ${BITS_TABLE} (rowid, embedding) VALUES (?, vec_quantize_binary(vec_f32(?)))`,
        ).run(BigInt(seq), padded);
      }
    })();
  }

  remove(seq: number): void {
    if (!this.#meta) return;
    statement(this.#db, `DELETE FROM ${BITS_TABLE} WHERE rowid = ?`).run(BigInt(seq));
  }

  clear(): void {
    if (!this.#meta) return;
    statement(this.#db, `DELETE FROM ${BITS_TABLE}`).run();
  }

  /** The `limit` memories nearest to `vector`, most similar first. */
  search(vector: readonly number[], limit: number): VectorHit[] {
    const meta = this.#meta;
    if (!meta || vector.length !== meta.dims) return [];
    const padded = [...vector, ...new Array(paddedBits(meta.dims) - vector.length).fill(0)];
    const candidates = statement(
      this.#db,
      `SELECT rowid AS seq FROM ${BITS_TABLE} WHERE embedding MATCH vec_quantize_binary(vec_f32(?)) AND k = ?`,
    ).all(Buffer.from(new Float32Array(padded).buffer), Math.max(limit, RERANK_POOL)) as Array<{ seq: number }>;
    if (candidates.length === 0) return [];
    const rows = statement(
      this.#db,
      `SELECT seq, vec_distance_cosine(embedding, ?) AS distance FROM memory_vectors
        WHERE seq IN (SELECT value FROM json_each(?))`,
    ).all(Buffer.from(new Float32Array(vector).buffer), JSON.stringify(candidates.map((c) => Number(c.seq)))) as Array<{
      seq: number;
      distance: number;
    }>;
    return rows
      .map((r) => ({ seq: r.seq, similarity: 1 - r.distance }))
      .sort((a, b) => b.similarity - a.similarity)
      .slice(0, limit);
  }
}

/** vec0 bit vectors need a multiple of 8 dimensions; shorter embeddings are padded with zeros. */
function paddedBits(dims: number): number {
  return Math.ceil(dims / 8) * 8;
}
