// The arithmetic of the inverted-file (IVF) vector index: spherical k-means centroids, nearest-list assignment
// and int8 codes. Training yields to the event loop between slices, so a daemon keeps answering while a large
// store is indexed.

export interface Centroids {
  dims: number;
  /** `count * dims` unit vectors, one per list. */
  values: Float32Array;
  count: number;
}

/** Multiply-adds done between two yields to the event loop (about 10 ms of work). */
const SLICE_WORK = 8_000_000;
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

export function unit(vector: ArrayLike<number>): Float32Array {
  const out = Float32Array.from(vector);
  let norm = 0;
  for (let i = 0; i < out.length; i++) norm += out[i]! * out[i]!;
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < out.length; i++) out[i]! /= norm;
  return out;
}

/** The list whose centroid is closest (highest dot product) to the unit vector `v`, and that dot product. */
export function nearestList(centroids: Centroids, v: Float32Array): { list: number; score: number } {
  const { values, dims, count } = centroids;
  let list = 0;
  let best = Number.NEGATIVE_INFINITY;
  for (let c = 0; c < count; c++) {
    let score = 0;
    const offset = c * dims;
    for (let i = 0; i < dims; i++) score += values[offset + i]! * v[i]!;
    if (score > best) {
      best = score;
      list = c;
    }
  }
  return { list, score: best };
}

/** Lists ordered from the closest to the farthest from the unit vector `v`. */
export function listsByCloseness(centroids: Centroids, v: Float32Array): number[] {
  const { values, dims, count } = centroids;
  const scores = new Float64Array(count);
  for (let c = 0; c < count; c++) {
    let score = 0;
    const offset = c * dims;
    for (let i = 0; i < dims; i++) score += values[offset + i]! * v[i]!;
    scores[c] = score;
  }
  return Array.from({ length: count }, (_, c) => c).sort((a, b) => scores[b]! - scores[a]!);
}

/**
 * Spherical k-means over `samples` (unit vectors): `count` centroids seeded from evenly spread samples, refined
 * for `iterations` rounds. A list that loses every sample keeps its previous centroid.
 */
export async function trainCentroids(
  samples: readonly Float32Array[],
  dims: number,
  count: number,
  iterations: number,
  signal?: AbortSignal,
): Promise<Centroids> {
  const lists = Math.max(1, Math.min(count, samples.length));
  const values = new Float32Array(lists * dims);
  for (let c = 0; c < lists; c++) values.set(samples[Math.floor((c * samples.length) / lists)]!, c * dims);
  const centroids: Centroids = { dims, values, count: lists };
  const perSlice = Math.max(1, Math.floor(SLICE_WORK / (lists * dims)));
  for (let round = 0; round < iterations; round++) {
    const sums = new Float64Array(lists * dims);
    const members = new Uint32Array(lists);
    for (let i = 0; i < samples.length; i++) {
      if (i % perSlice === perSlice - 1) {
        await yieldToEventLoop();
        signal?.throwIfAborted();
      }
      const sample = samples[i]!;
      const { list } = nearestList(centroids, sample);
      members[list]!++;
      const offset = list * dims;
      for (let d = 0; d < dims; d++) sums[offset + d]! += sample[d]!;
    }
    for (let c = 0; c < lists; c++) {
      if (members[c] === 0) continue;
      values.set(unit(sums.subarray(c * dims, (c + 1) * dims)), c * dims);
    }
  }
  return centroids;
}

/** The nearest list of each unit vector and its similarity to that list's centroid, yielding between slices. */
export async function assignLists(
  centroids: Centroids,
  vectors: readonly Float32Array[],
  signal?: AbortSignal,
): Promise<{ lists: Int32Array; scores: Float32Array }> {
  const perSlice = Math.max(1, Math.floor(SLICE_WORK / (centroids.count * centroids.dims)));
  const lists = new Int32Array(vectors.length);
  const scores = new Float32Array(vectors.length);
  for (let i = 0; i < vectors.length; i++) {
    if (i % perSlice === perSlice - 1) {
      await yieldToEventLoop();
      signal?.throwIfAborted();
    }
    const nearest = nearestList(centroids, vectors[i]!);
    lists[i] = nearest.list;
    scores[i] = nearest.score;
  }
  return { lists, scores };
}

/** An int8 code of a vector for sqlite-vec (`vec_int8`): scaled so its largest component is ±127. */
export function int8Code(vector: ArrayLike<number>): Buffer {
  let max = 0;
  for (let i = 0; i < vector.length; i++) max = Math.max(max, Math.abs(vector[i]!));
  const scale = max > 0 ? 127 / max : 0;
  const code = new Int8Array(vector.length);
  for (let i = 0; i < vector.length; i++) code[i] = Math.round(vector[i]! * scale);
  return Buffer.from(code.buffer);
}

export function centroidsToRows(centroids: Centroids): Array<{ list: number; centroid: Buffer }> {
  return Array.from({ length: centroids.count }, (_, c) => ({
    list: c,
    centroid: Buffer.from(centroids.values.slice(c * centroids.dims, (c + 1) * centroids.dims).buffer),
  }));
}

/** Centroids from their stored blobs, in list order. */
export function centroidsFromRows(blobs: readonly Buffer[], dims: number): Centroids {
  const values = new Float32Array(blobs.length * dims);
  // Copied: a blob's bytes need not be aligned for a Float32Array view.
  for (const [c, blob] of blobs.entries())
    values.set(new Float32Array(Uint8Array.from(blob).buffer, 0, dims), c * dims);
  return { dims, values, count: blobs.length };
}
