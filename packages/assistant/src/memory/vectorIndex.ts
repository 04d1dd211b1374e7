import { createRequire } from "node:module";
import { type Db, statement } from "../store/database.ts";

// Vector search over memories with sqlite-vec. Float embeddings live in memory_vectors (a plain table, so point
// reads are cheap); the nearest-neighbour scan runs on their sign bits in a vec0 bit[] table (a Hamming scan is
// several times cheaper than a float scan), and the best candidates are re-ranked by exact cosine distance.
// Large stores are split into 64 buckets by random-hyperplane hashing (a vec0 partition key): a query scans its
// own bucket and the 6 buckets one hyperplane away instead of every row, which keeps search in a few
// milliseconds at 100,000 memories. The bit table is sized by the embedder, so it is made at run time.

const BITS_TABLE = "memory_vec_bits";
const SETTINGS_KEY = "memory.vectors";
/** Candidates from the bit scan that get an exact distance. */
const RERANK_POOL = 200;
const PLANES = 6;
/** Up to this many vectors a query compares exact float vectors with every one of them. */
const EXACT_LIMIT = 10_000;
/** Up to this many vectors a query scans all sign bits; above it, only the probed buckets. */
const FULL_SCAN_LIMIT = 20_000;
const PER_BUCKET = 60;

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
  #planes: Float32Array[] = [];
  #count: number | null = null;

  constructor(db: Db) {
    this.#db = db;
    const row = statement(this.#db, "SELECT value FROM settings WHERE key = ?").get(SETTINGS_KEY) as
      | { value: string }
      | undefined;
    this.#meta = row ? (JSON.parse(row.value) as IndexMeta) : null;
    if (this.#meta) this.#planes = hyperplanes(this.#meta.dims);
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
      this.#db.exec(
        `CREATE VIRTUAL TABLE ${BITS_TABLE} USING vec0(bucket integer partition key, embedding bit[${paddedBits(dims)}])`,
      );
      statement(this.#db, "DELETE FROM memory_vectors").run();
      statement(this.#db, "UPDATE memories SET vector_dims = NULL").run();
      statement(
        this.#db,
        "INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
      ).run(SETTINGS_KEY, JSON.stringify({ embedder, dims }), new Date().toISOString());
    })();
    this.#meta = { embedder, dims };
    this.#planes = hyperplanes(dims);
    this.#count = 0;
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
          `INSERT INTO ${BITS_TABLE} (rowid, bucket, embedding) VALUES (?, ?, vec_quantize_binary(vec_f32(?)))`,
        ).run(BigInt(seq), BigInt(this.#bucket(vector)), padded);
      }
    })();
    this.#count = null;
  }

  /** The bucket of a vector: which side of each hyperplane it lies on. */
  #bucket(vector: readonly number[]): number {
    let bucket = 0;
    for (let p = 0; p < this.#planes.length; p++) {
      const plane = this.#planes[p]!;
      let dot = 0;
      for (let i = 0; i < vector.length; i++) dot += plane[i]! * vector[i]!;
      if (dot > 0) bucket |= 1 << p;
    }
    return bucket;
  }

  #size(): number {
    this.#count ??= (statement(this.#db, "SELECT COUNT(*) AS n FROM memory_vectors").get() as { n: number }).n;
    return this.#count;
  }

  remove(seq: number): void {
    if (!this.#meta) return;
    statement(this.#db, `DELETE FROM ${BITS_TABLE} WHERE rowid = ?`).run(BigInt(seq));
    this.#count = null;
  }

  clear(): void {
    if (!this.#meta) return;
    statement(this.#db, `DELETE FROM ${BITS_TABLE}`).run();
    this.#count = 0;
  }

  /** The `limit` memories nearest to `vector`, most similar first. */
  search(vector: readonly number[], limit: number): VectorHit[] {
    const meta = this.#meta;
    if (!meta || vector.length !== meta.dims) return [];
    const padded = [...vector, ...new Array(paddedBits(meta.dims) - vector.length).fill(0)];
    const query = Buffer.from(new Float32Array(padded).buffer);
    let candidates: Array<{ seq: number }>;
    if (this.#size() <= EXACT_LIMIT) {
      // A personal store is usually small: an exact cosine scan of every float vector is cheap and misses nothing.
      const exact = statement(
        this.#db,
        "SELECT seq, vec_distance_cosine(embedding, ?) AS distance FROM memory_vectors ORDER BY distance LIMIT ?",
      ).all(Buffer.from(new Float32Array(vector).buffer), limit) as Array<{ seq: number; distance: number }>;
      return exact.map((r) => ({ seq: r.seq, similarity: 1 - r.distance }));
    }
    if (this.#size() <= FULL_SCAN_LIMIT) {
      candidates = statement(
        this.#db,
        `SELECT rowid AS seq FROM ${BITS_TABLE} WHERE embedding MATCH vec_quantize_binary(vec_f32(?)) AND k = ?`,
      ).all(query, Math.max(limit, RERANK_POOL)) as Array<{ seq: number }>;
    } else {
      const own = this.#bucket(vector);
      const probe = statement(
        this.#db,
        `SELECT rowid AS seq FROM ${BITS_TABLE}
          WHERE embedding MATCH vec_quantize_binary(vec_f32(?)) AND k = ? AND bucket = ?`,
      );
      candidates = [own, ...this.#planes.map((_, p) => own ^ (1 << p))].flatMap(
        (bucket) => probe.all(query, Math.max(limit, PER_BUCKET), BigInt(bucket)) as Array<{ seq: number }>,
      );
    }
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

/** PLANES fixed pseudo-random hyperplanes for `dims` (the same on every start, so buckets stay valid). */
function hyperplanes(dims: number): Float32Array[] {
  let state = 0x9e3779b9;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296 - 0.5;
  };
  return Array.from({ length: PLANES }, () => Float32Array.from({ length: dims }, next));
}

/** vec0 bit vectors need a multiple of 8 dimensions; shorter embeddings are padded with zeros. */
function paddedBits(dims: number): number {
  return Math.ceil(dims / 8) * 8;
}
