import { readFileSync, statSync } from "node:fs";
import { arch, availableParallelism, cpus, platform } from "node:os";
import type { Llama, LlamaModel } from "node-llama-cpp";
import * as z from "zod";
import { writeFileAtomic } from "../../util/atomicWrite.ts";
import type { EmbeddedCalibration } from "../types.ts";

// Thread calibration of the embedded model (docs/models.md#the-embedded-model). The fastest llama.cpp thread
// count depends on the model file and the machine (a tiny model on a busy 2-core VM runs 10x faster on one thread
// than on two), so it is measured once per (file, machine) when the file is first loaded and stored beside the
// models; a changed file (size or mtime), CPU, core count or llama.cpp build measures again.

/** Which file was measured: a replaced or rewritten file has another size or mtime. */
export interface FileIdentity {
  path: string;
  size: number;
  mtime_ms: number;
}

/**
 * Which machine measured it. `cpu` (model, logical cores, platform) is known without loading llama.cpp, so the
 * status can show a calibration before the first load; `backend` (llama.cpp release, build, GPU) is checked at load.
 */
export interface MachineIdentity {
  cpu: string;
  backend: string;
}

/** Total time a calibration may take, warm-up included (a slow candidate is cut when its time is up). */
export const CALIBRATION_BUDGET_MS = 3000;
const CALIBRATION_TOKENS = 32;
const WARMUP_TOKENS = 2;
const CALIBRATION_CONTEXT = 512;
const CALIBRATION_TEXT = "Write a short story about a lighthouse keeper who finds a message in a bottle.";
/** More threads must be this much faster to be chosen: fewer threads leave cores to the rest of the machine. */
const BETTER_BY = 1.05;
const MAX_ENTRIES = 16;
const MAX_THREADS = 8;

export function fileIdentity(path: string): FileIdentity | null {
  try {
    const info = statSync(path);
    return info.isFile() ? { path, size: info.size, mtime_ms: Math.round(info.mtimeMs) } : null;
  } catch {
    return null;
  }
}

export function cpuIdentity(): string {
  return `${cpus()[0]?.model.trim() ?? "unknown CPU"} x${availableParallelism()} ${platform()}-${arch()}`;
}

export function backendIdentity(llama: Llama): string {
  const release = llama.llamaCppRelease;
  return `llama.cpp ${release.release} (${llama.buildType}) gpu ${llama.gpu === false ? "none" : llama.gpu}`;
}

/** Thread counts worth trying: 1, 2, 4 and the machine's physical and logical counts, within MAX_THREADS. */
export function threadCandidates(available = availableParallelism()): number[] {
  const limit = Math.min(available, MAX_THREADS);
  const counts = [1, 2, 4, available >= 8 ? Math.floor(available / 2) : available, available];
  return [...new Set(counts.filter((n) => n <= limit))].sort((a, b) => a - b);
}

export interface MeasureOptions {
  candidates: number[];
  budgetMs?: number;
  signal?: AbortSignal;
}

export type Measurement = Omit<EmbeddedCalibration, "measured_at" | "automatic" | "gpu_layers">;

/**
 * Decode speed of a fixed raw generation with each thread count, within `budgetMs`: each candidate gets an
 * equal share of what is left, and stops as soon as it can no longer beat the best so far, so a bad thread
 * count (often 10x slower) costs a few tokens, not a whole run.
 */
export async function measureThreads(model: LlamaModel, options: MeasureOptions): Promise<Measurement> {
  const budgetMs = options.budgetMs ?? CALIBRATION_BUDGET_MS;
  const started = performance.now();
  const deadline = started + budgetMs;
  const prompt = model.tokenize(CALIBRATION_TEXT);
  const first = options.candidates[0] ?? 1;
  // Warm-up: the first evaluation pays for cold caches and pages the weights in.
  await generate(model, prompt, first, WARMUP_TOKENS, () => performance.now() > deadline);
  const results: Measurement["candidates"] = [];
  let best: Measurement["candidates"][number] | undefined;
  for (const [index, threads] of options.candidates.entries()) {
    options.signal?.throwIfAborted();
    const now = performance.now();
    if (now >= deadline && best) break;
    const share = now + (deadline - now) / (options.candidates.length - index);
    const rival = best;
    const result = await generate(model, prompt, threads, CALIBRATION_TOKENS, (generated, span) => {
      if (generated >= 3 && performance.now() > share) return true; // a rate needs a few tokens
      // Slower than the best already: its whole run could not end sooner.
      return rival !== undefined && generated > 1 && span > ((CALIBRATION_TOKENS - 1) / rival.tokens_per_second) * 1000;
    });
    results.push(result);
    if (!best || result.tokens_per_second > best.tokens_per_second * BETTER_BY) best = result;
  }
  if (!best) throw new Error("the calibration measured nothing");
  return {
    threads: best.threads,
    tokens_per_second: best.tokens_per_second,
    first_token_ms: best.first_token_ms,
    candidates: results,
    duration_ms: Math.round(performance.now() - started),
  };
}

/** Raw evaluation, not chat: it never stops early at an end-of-text token. */
async function generate(
  model: LlamaModel,
  prompt: ReturnType<LlamaModel["tokenize"]>,
  threads: number,
  tokens: number,
  stop: (generated: number, spanMs: number) => boolean,
) {
  const context = await model.createContext({ contextSize: CALIBRATION_CONTEXT, threads, sequences: 1 });
  try {
    const started = performance.now();
    let firstAt: number | undefined;
    let lastAt = started;
    let generated = 0;
    for await (const _ of context.getSequence().evaluate(prompt, { temperature: 0 })) {
      lastAt = performance.now();
      firstAt ??= lastAt;
      if (++generated >= tokens || stop(generated, lastAt - firstAt)) break;
    }
    const first = firstAt ?? lastAt;
    return {
      threads,
      first_token_ms: Math.round(first - started),
      tokens_per_second: generated > 1 && lastAt > first ? round((generated - 1) / ((lastAt - first) / 1000)) : 0,
      tokens: generated,
    };
  } finally {
    await context.dispose();
  }
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

// ---- the stored calibrations ----------------------------------------------------------------------------

const entrySchema = z.object({
  file: z.object({ path: z.string(), size: z.number(), mtime_ms: z.number() }),
  machine: z.object({ cpu: z.string(), backend: z.string() }),
  measured_at: z.string(),
  automatic: z.boolean(),
  threads: z.number().int().positive(),
  gpu_layers: z.number().int().min(0),
  tokens_per_second: z.number(),
  first_token_ms: z.number(),
  duration_ms: z.number(),
  candidates: z.array(
    z.object({ threads: z.number(), tokens_per_second: z.number(), first_token_ms: z.number(), tokens: z.number() }),
  ),
});
const storeSchema = z.object({ entries: z.array(entrySchema) });
type Entry = z.infer<typeof entrySchema>;

/** `<models>/embedded_calibration.json`: one entry per (file, machine), newest first. */
export class CalibrationStore {
  readonly path: string;

  constructor(path: string) {
    this.path = path;
  }

  /** The calibration of `file` on this CPU; with `backend`, only one measured with that llama.cpp build too. */
  find(file: FileIdentity, machine: { cpu: string; backend?: string }): EmbeddedCalibration | null {
    const entry = this.read().find(
      (e) =>
        sameFile(e.file, file) &&
        e.machine.cpu === machine.cpu &&
        (machine.backend === undefined || e.machine.backend === machine.backend),
    );
    if (!entry) return null;
    const { file: _file, machine: _machine, ...calibration } = entry;
    return calibration;
  }

  save(file: FileIdentity, machine: MachineIdentity, calibration: EmbeddedCalibration): void {
    // A new measurement of the same path on the same CPU replaces the old one (the file or build changed).
    const others = this.read().filter((e) => !(e.file.path === file.path && e.machine.cpu === machine.cpu));
    const entries = [{ file, machine, ...calibration }, ...others].slice(0, MAX_ENTRIES);
    writeFileAtomic(this.path, `${JSON.stringify({ entries }, null, 2)}\n`);
  }

  private read(): Entry[] {
    try {
      return storeSchema.parse(JSON.parse(readFileSync(this.path, "utf8"))).entries;
    } catch {
      return []; // none yet, an older format or unreadable: measure again
    }
  }
}

function sameFile(a: FileIdentity, b: FileIdentity): boolean {
  return a.path === b.path && a.size === b.size && a.mtime_ms === b.mtime_ms;
}
