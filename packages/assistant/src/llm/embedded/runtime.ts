import { closeSync, openSync, readSync, statSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Llama, LlamaContext, LlamaContextSequence, LlamaEmbeddingContext, LlamaModel } from "node-llama-cpp";
import type { DataPaths } from "../../config/paths.ts";
import type { Logger } from "../../log/logger.ts";
import { ProviderFailure } from "../errors.ts";
import type { EmbeddedModelSettings, LlmSettings } from "../settings.ts";
import type { EmbeddedCalibration, EmbeddedRuntime, EmbeddedState, EmbeddedStatus, LanguageModelV4 } from "../types.ts";
import {
  backendIdentity,
  CalibrationStore,
  cpuIdentity,
  type FileIdentity,
  fileIdentity,
  type MachineIdentity,
  measureThreads,
  threadCandidates,
} from "./calibration.ts";
import { resolveEmbeddedModel } from "./catalogue.ts";
import { downloadTarget, type ModelDownloader } from "./download.ts";
import { createEmbeddedLanguageModel, type EmbeddedLease } from "./languageModel.ts";

// The embedded llama.cpp model, owned by the daemon (docs/models.md#the-embedded-model). Nothing is
// imported or loaded until a call needs the model. A missing catalogue model starts a download and the call
// fails as "unavailable" (after a moment to catch a download that cannot even start, so the reason is "no
// network", not "downloading"), so chats fall through to the next route while it downloads; the first call after
// the download loads it. After a failed download, chats do not start another until the downloader's backoff ends. One context with one sequence serves every call, one call at
// a time: on a small machine parallel sequences only split the same cores. The first load of a model file on a
// machine measures the fastest thread count (calibration.ts, a few seconds at most) before the context is made.

export interface EmbeddedRuntimeOptions {
  settings: EmbeddedModelSettings & Pick<LlmSettings, "embeddedThreads" | "embeddedContext" | "embeddedGpu">;
  paths: DataPaths;
  logger?: Logger;
  downloader: ModelDownloader;
  /** Default `<modelsDir>/embedded_calibration.json`. */
  calibrationFile?: string;
  /** Stands in for this machine's CPU identity (tests of a calibration measured on another machine). */
  machineId?: string;
  /** Time a calibration may take (default calibration.ts CALIBRATION_BUDGET_MS). */
  calibrationBudgetMs?: number;
}

const MAX_DEFAULT_CONTEXT = 8192;
const MAX_THREADS = 8;
/** Memory items and queries are short; a small context keeps the embedding context's memory small. */
const EMBEDDING_CONTEXT = 512;

interface Loaded {
  llama: Llama;
  model: LlamaModel;
  context: LlamaContext;
  sequence: LlamaContextSequence;
  /** Made on the first embedding request (memory), beside the chat context. */
  embedding?: LlamaEmbeddingContext;
}

/** How long a chat waits to see whether a download it started fails at once (no network). */
const EARLY_FAILURE_MS = 1_000;

/** Why the model is not there, when its download failed, with the ways to do without a network. */
function downloadFailed(error: string | null, retryAt: number | undefined): string {
  const next = retryAt ? `; next try in ${Math.max(1, Math.ceil((retryAt - Date.now()) / 60_000))} min` : "";
  return `the model file could not be downloaded: ${error ?? "no reason given"}${next} (offline: ASSISTANT_EMBEDDED_MODEL_PATH names a GGUF file you have, ASSISTANT_EMBEDDED_MODEL_URL a mirror; or use a model server you run: \`assistant discover\`)`;
}

export function createEmbeddedRuntime(options: EmbeddedRuntimeOptions): EmbeddedRuntime {
  const { settings, paths, logger, downloader } = options;
  const store = new CalibrationStore(options.calibrationFile ?? join(paths.modelsDir, "embedded_calibration.json"));
  const cpu = options.machineId ?? cpuIdentity();
  const gpuEnabled = settings.embeddedGpu;
  const threadsOverride = settings.embeddedThreads;
  const contextOverride = settings.embeddedContext;
  const resolved = resolveEmbeddedModel(settings, paths);
  const modelId = resolved.model_id;
  const modelPath = resolved.path;
  let calibration = storedCalibration();

  let llama: Llama | undefined;
  let loaded: Loaded | undefined;
  let loading: Promise<Loaded> | undefined;
  let lastError: string | undefined;
  let closed = false;
  let calibrating = false;
  const turns = new Turns();

  function fileSize(): number | null {
    try {
      const info = statSync(modelPath);
      return info.isFile() ? info.size : null;
    } catch {
      return null;
    }
  }

  /** What this CPU measured for the file as it is now (the llama.cpp build is checked at load). */
  function storedCalibration(): EmbeddedCalibration | null {
    const file = fileIdentity(modelPath);
    return file ? store.find(file, { cpu }) : null;
  }

  const threads = () => threadsOverride ?? calibration?.threads ?? machineThreads();
  const threadsSource = () => (threadsOverride ? "setting" : calibration ? "calibration" : "machine");

  /** ASSISTANT_EMBEDDED_CONTEXT as given; else 8192 within the trained context. */
  function plannedContext(trainContext?: number): number {
    if (contextOverride) return contextOverride;
    return Math.min(trainContext ?? resolved.context_length ?? MAX_DEFAULT_CONTEXT, MAX_DEFAULT_CONTEXT);
  }

  function status(): EmbeddedStatus {
    if (loaded) return "loaded";
    if (calibrating) return "calibrating";
    if (loading) return modelPath && downloader.running(modelPath) ? "downloading" : "loading";
    if (modelPath && downloader.running(modelPath)) return "downloading";
    return lastError || downloadError() ? "failed" : "unloaded";
  }

  function downloadError(): string | undefined {
    if (!modelPath || fileSize() !== null) return undefined;
    const progress = downloader.progress(modelPath);
    return progress.status === "failed" ? (progress.error ?? "the download failed") : undefined;
  }

  async function load(): Promise<Loaded> {
    const model = resolved;
    if (fileSize() === null) {
      if (model.custom) {
        throw new ProviderFailure(
          "unavailable",
          `ASSISTANT_EMBEDDED_MODEL_PATH names ${model.path}, which does not exist or is not a file`,
        );
      }
      let progress = downloader.start(downloadTarget(model), { automatic: true });
      if (progress.status === "running" || progress.status === "verifying") {
        // A download that cannot start (no network, DNS failure, refused) fails within moments: say why then,
        // not "downloading".
        const early = sleep(EARLY_FAILURE_MS, undefined, { ref: false }).then(() => downloader.progress(model.path));
        progress = await Promise.race([downloader.wait(model.path), early]);
      }
      if (progress.status === "failed") {
        throw new ProviderFailure("unavailable", downloadFailed(progress.error, downloader.retryAt(model.path)));
      }
      if (progress.status !== "completed" || fileSize() === null) {
        const done = progress.percent !== null ? ` (${progress.percent}%)` : "";
        throw new ProviderFailure(
          "unavailable",
          `the embedded model ${model.model_id} is downloading${done}; chats use the other routes until it is ready`,
        );
      }
    }
    const problem = ggufProblem(model.path);
    if (problem) throw new ProviderFailure("unavailable", `${model.path} is not a usable GGUF model: ${problem}`);

    const started = performance.now();
    let lib: typeof import("node-llama-cpp");
    try {
      lib = await import("node-llama-cpp");
    } catch (error) {
      throw new ProviderFailure("unavailable", `node-llama-cpp cannot be loaded: ${(error as Error).message}`);
    }
    try {
      llama ??= await lib.getLlama({
        build: "never", // never start a surprise source build
        gpu: gpuEnabled ? "auto" : false,
        logLevel: lib.LlamaLogLevel.error,
        ...(logger
          ? { logger: (_level: unknown, message: string) => logger.warn("llama.cpp", { message: message.trim() }) }
          : {}),
      });
    } catch (error) {
      throw new ProviderFailure(
        "unavailable",
        error instanceof lib.NoBinaryFoundError
          ? "llama.cpp has no prebuilt binary for this platform, so the embedded model cannot run here"
          : `llama.cpp does not load: ${(error as Error).message}`,
      );
    }
    let weights: LlamaModel | undefined;
    try {
      weights = await llama.loadModel({ modelPath: model.path, gpuLayers: llama.gpu === false ? 0 : "auto" });
      await calibrateOnFirstLoad(llama, weights);
      const context = await weights.createContext({
        contextSize: plannedContext(weights.trainContextSize),
        threads: threads(),
        sequences: 1,
      });
      const result = { llama, model: weights, context, sequence: context.getSequence() };
      logger?.info("embedded model loaded", {
        model_id: model.model_id,
        ms: Math.round(performance.now() - started),
        threads: context.idealThreads,
        threads_source: threadsSource(),
        context_size: context.contextSize,
        gpu: llama.gpu,
        gpu_layers: weights.gpuLayers,
      });
      return result;
    } catch (error) {
      await weights?.dispose().catch(() => {});
      throw new ProviderFailure("unavailable", `llama.cpp cannot load ${model.path}: ${(error as Error).message}`);
    }
  }

  function ensureLoaded(): Promise<Loaded> {
    if (loaded) return Promise.resolve(loaded);
    loading ??= load()
      .then((result) => {
        loaded = result;
        lastError = undefined;
        return result;
      })
      .catch((error: unknown) => {
        const reason = (error as Error).message;
        // "Downloading" is a passing state, not a failure to remember once the download is over.
        lastError = downloader.running(modelPath) ? undefined : reason;
        if (lastError) logger?.warn("embedded model unavailable", { model_id: modelId, reason });
        throw error;
      })
      .finally(() => {
        loading = undefined;
      });
    return loading;
  }

  async function acquire(signal?: AbortSignal): Promise<EmbeddedLease> {
    if (closed) throw new ProviderFailure("unavailable", "the embedded runtime is closed");
    const release = await turns.take(signal);
    try {
      const current = await abortable(ensureLoaded(), signal);
      return { llama: current.llama, model: current.model, sequence: current.sequence, release };
    } catch (error) {
      release();
      throw error;
    }
  }

  async function dropWeights(): Promise<void> {
    const current = loaded;
    loaded = undefined;
    if (!current) return;
    await current.embedding?.dispose();
    await current.context.dispose();
    await current.model.dispose();
    logger?.info("embedded model unloaded", { model_id: modelId });
  }

  /**
   * Applies the stored calibration of this file on this machine and llama.cpp build, or measures one (the
   * status says "calibrating"). ASSISTANT_EMBEDDED_THREADS skips it: the person chose.
   */
  async function calibrateOnFirstLoad(current: Llama, weights: LlamaModel): Promise<void> {
    const file = fileIdentity(modelPath);
    if (!file) return;
    const machine = { cpu, backend: backendIdentity(current) };
    calibration = store.find(file, machine);
    if (calibration || threadsOverride) return;
    calibrating = true;
    try {
      await runCalibration(weights, file, machine, true);
    } catch (error) {
      // Never a reason not to answer: the machine's default thread count serves this load.
      logger?.warn("embedded model calibration failed", { model_id: modelId, reason: (error as Error).message });
    } finally {
      calibrating = false;
    }
  }

  async function runCalibration(
    weights: LlamaModel,
    file: FileIdentity,
    machine: MachineIdentity,
    automatic: boolean,
    signal?: AbortSignal,
  ): Promise<EmbeddedCalibration> {
    const measurement = await measureThreads(weights, {
      candidates: threadCandidates(),
      ...(options.calibrationBudgetMs !== undefined ? { budgetMs: options.calibrationBudgetMs } : {}),
      ...(signal ? { signal } : {}),
    });
    const measured: EmbeddedCalibration = {
      measured_at: new Date().toISOString(),
      automatic,
      gpu_layers: weights.gpuLayers,
      ...measurement,
    };
    store.save(file, machine, measured);
    calibration = measured;
    logger?.info("embedded model calibrated", {
      model_id: modelId,
      threads: measured.threads,
      tokens_per_second: measured.tokens_per_second,
      duration_ms: measured.duration_ms,
      automatic,
    });
    return measured;
  }

  let languageModel: LanguageModelV4 | undefined;

  return {
    state(): EmbeddedState {
      const current = loaded;
      // Until a load checks it against the llama.cpp build, the stored measurement of the file as it is now.
      if (!current && !loading) calibration = storedCalibration();
      return {
        status: status(),
        model_id: modelId,
        path: modelPath,
        file_present: fileSize() !== null,
        size_bytes: fileSize(),
        threads: current?.context.idealThreads ?? threads(),
        threads_source: threadsSource(),
        context_size: current?.context.contextSize ?? plannedContext(),
        gpu: current ? current.llama.gpu : gpuEnabled ? "auto" : false,
        gpu_layers: current?.model.gpuLayers ?? 0,
        calibration,
        error: loaded ? null : (lastError ?? downloadError() ?? null),
      };
    },

    languageModel(): LanguageModelV4 {
      languageModel ??= createEmbeddedLanguageModel({ modelId, acquire });
      return languageModel;
    },

    async embed(texts: readonly string[], signal?: AbortSignal): Promise<number[][]> {
      // Only a model already on disk: embeddings never start a download (memory then uses text search alone).
      if (fileSize() === null) throw new ProviderFailure("unavailable", "the embedded model file is not present");
      const lease = await acquire(signal);
      try {
        const current = loaded!;
        current.embedding ??= await current.model.createEmbeddingContext({
          contextSize: Math.min(EMBEDDING_CONTEXT, current.model.trainContextSize),
          threads: threads(),
        });
        const vectors: number[][] = [];
        for (const text of texts) {
          signal?.throwIfAborted();
          // Longer texts are cut to the context: a memory item is a sentence or two.
          const tokens = current.model.tokenize(text).slice(0, EMBEDDING_CONTEXT - 1);
          vectors.push([...(await current.embedding.getEmbeddingFor(tokens)).vector]);
        }
        return vectors;
      } finally {
        lease.release();
      }
    },

    async unload(): Promise<void> {
      const release = await turns.take();
      try {
        await loading?.catch(() => {}); // a load left behind by an aborted call
        await dropWeights();
        lastError = undefined;
      } finally {
        release();
      }
    },

    async calibrate(signal?: AbortSignal): Promise<EmbeddedCalibration> {
      const before = calibration;
      const lease = await acquire(signal);
      try {
        const current = loaded!;
        // A first load measures on its own: no need to measure twice.
        if (calibration && calibration.measured_at !== before?.measured_at) return calibration;
        const file = fileIdentity(modelPath);
        if (!file) throw new ProviderFailure("unavailable", `${modelPath} is gone`);
        const measured = await runCalibration(
          current.model,
          file,
          { cpu, backend: backendIdentity(current.llama) },
          false,
          signal,
        );
        // Apply: the context carries the thread count, the weights stay loaded.
        if (current.context.idealThreads !== threads()) {
          const contextSize = current.context.contextSize;
          await current.embedding?.dispose();
          await current.context.dispose();
          const context = await current.model.createContext({ contextSize, threads: threads(), sequences: 1 });
          loaded = { llama: current.llama, model: current.model, context, sequence: context.getSequence() };
        }
        return measured;
      } finally {
        lease.release();
      }
    },

    async close(): Promise<void> {
      closed = true;
      const release = await turns.take();
      try {
        await loading?.catch(() => {});
        await dropWeights();
        await llama?.dispose();
        llama = undefined;
      } finally {
        release();
      }
    },
  };
}

/**
 * Threads for llama.cpp: one per physical core. Machines with 8+ logical CPUs usually have two per core (SMT),
 * and llama.cpp slows down with more threads than physical cores; capped because memory bandwidth is the limit.
 */
export function machineThreads(): number {
  const logical = availableParallelism();
  return Math.max(1, Math.min(MAX_THREADS, logical >= 8 ? Math.floor(logical / 2) : logical));
}

/** Resolves with `promise`, or rejects with the signal's reason as soon as it aborts (the work goes on). */
function abortable<T>(promise: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** One holder at a time, in arrival order; a waiter whose signal aborts leaves the line. */
class Turns {
  private tail: Promise<void> = Promise.resolve();

  async take(signal?: AbortSignal): Promise<() => void> {
    let release!: () => void;
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    const previous = this.tail;
    this.tail = previous.then(() => mine);
    try {
      await abortable(previous, signal);
    } catch (error) {
      void previous.then(release);
      throw error;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      release();
    };
  }
}

// ---- GGUF validation -----------------------------------------------------------------------------------
// llama.cpp aborts the whole process on some malformed files, so a file is checked before it is handed over:
// header, metadata and tensor table must parse, and every tensor's data must lie inside the file.

/** ggml type id -> [bytes per block, elements per block]; unknown (newer) types skip the size check. */
const GGML_TYPES: Record<number, [number, number]> = {
  0: [4, 1], // F32
  1: [2, 1], // F16
  2: [18, 32], // Q4_0
  3: [20, 32], // Q4_1
  6: [22, 32], // Q5_0
  7: [24, 32], // Q5_1
  8: [34, 32], // Q8_0
  9: [36, 32], // Q8_1
  10: [84, 256], // Q2_K
  11: [110, 256], // Q3_K
  12: [144, 256], // Q4_K
  13: [176, 256], // Q5_K
  14: [210, 256], // Q6_K
  15: [292, 256], // Q8_K
  16: [66, 256], // IQ2_XXS
  17: [74, 256], // IQ2_XS
  18: [98, 256], // IQ3_XXS
  19: [50, 256], // IQ1_S
  20: [18, 32], // IQ4_NL
  21: [110, 256], // IQ3_S
  22: [82, 256], // IQ2_S
  23: [136, 256], // IQ4_XS
  24: [1, 1], // I8
  25: [2, 1], // I16
  26: [4, 1], // I32
  27: [8, 1], // I64
  28: [8, 1], // F64
  29: [56, 256], // IQ1_M
  30: [2, 1], // BF16
  34: [54, 256], // TQ1_0
  35: [66, 256], // TQ2_0
  39: [17, 32], // MXFP4
};
/** GGUF metadata value type -> size in bytes (8 string and 9 array are variable). */
const VALUE_SIZES: Record<number, number> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };
const MAX_COUNT = 1_000_000;

/** Why the file at `path` cannot be a loadable GGUF model, or undefined when it looks sound. */
export function ggufProblem(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (error) {
    return `cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
  }
  try {
    const reader = new GgufReader(fd, statSync(path).size);
    if (reader.size < 24 || reader.ascii(4) !== "GGUF") return 'it does not start with "GGUF"';
    const version = reader.u32();
    if (version !== 2 && version !== 3) return `unsupported GGUF version ${version}`;
    const tensorCount = reader.u64();
    const kvCount = reader.u64();
    if (tensorCount < 1 || tensorCount > MAX_COUNT) return `implausible tensor count ${tensorCount}`;
    if (kvCount > MAX_COUNT) return `implausible metadata count ${kvCount}`;
    let alignment = 32;
    let architecture: string | undefined;
    for (let i = 0; i < kvCount; i++) {
      const key = reader.string();
      const type = reader.u32();
      if (key === "general.alignment" && type === 4) alignment = reader.u32();
      else if (key === "general.architecture" && type === 8) architecture = reader.string();
      else reader.skipValue(type, 0);
    }
    if (!architecture) return "it has no general.architecture";
    if (alignment < 1 || (alignment & (alignment - 1)) !== 0) return `invalid alignment ${alignment}`;
    let dataEnd = 0;
    for (let i = 0; i < tensorCount; i++) {
      const name = reader.string();
      const dims = reader.u32();
      if (dims < 1 || dims > 8) return `tensor ${name} has ${dims} dimensions`;
      let elements = 1;
      for (let d = 0; d < dims; d++) elements *= reader.u64();
      const type = reader.u32();
      const offset = reader.u64();
      if (offset % alignment !== 0) return `tensor ${name} is not aligned`;
      const block = GGML_TYPES[type];
      const bytes = block ? Math.ceil(elements / block[1]) * block[0] : 0;
      dataEnd = Math.max(dataEnd, offset + bytes);
    }
    const dataStart = Math.ceil(reader.pos / alignment) * alignment;
    if (dataStart + dataEnd > reader.size) {
      return `it is truncated: the tensors need ${dataStart + dataEnd} bytes, the file has ${reader.size}`;
    }
    return undefined;
  } catch (error) {
    return (error as Error).message;
  } finally {
    closeSync(fd);
  }
}

class GgufReader {
  readonly size: number;
  pos = 0;
  private readonly fd: number;
  private buffer = Buffer.alloc(1 << 16);
  private start = 0;
  private end = 0;

  constructor(fd: number, size: number) {
    this.fd = fd;
    this.size = size;
  }

  /** Makes `n` bytes at `pos` readable from the buffer. */
  private fill(n: number): void {
    if (this.pos + n > this.size) throw new Error(`the header runs past the end of the file (byte ${this.pos + n})`);
    if (this.pos >= this.start && this.pos + n <= this.end) return;
    if (n > this.buffer.length) this.buffer = Buffer.alloc(n);
    const read = readSync(this.fd, this.buffer, 0, Math.min(this.buffer.length, this.size - this.pos), this.pos);
    this.start = this.pos;
    this.end = this.pos + read;
    if (this.end < this.pos + n) throw new Error(`short read at byte ${this.pos}`);
  }

  private skip(n: number): void {
    if (this.pos + n > this.size) throw new Error(`the header runs past the end of the file (byte ${this.pos + n})`);
    this.pos += n;
  }

  ascii(n: number): string {
    this.fill(n);
    const value = this.buffer.toString("latin1", this.pos - this.start, this.pos - this.start + n);
    this.pos += n;
    return value;
  }

  u32(): number {
    this.fill(4);
    const value = this.buffer.readUInt32LE(this.pos - this.start);
    this.pos += 4;
    return value;
  }

  u64(): number {
    this.fill(8);
    const value = this.buffer.readBigUInt64LE(this.pos - this.start);
    this.pos += 8;
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`implausible value ${value} at byte ${this.pos - 8}`);
    return Number(value);
  }

  string(): string {
    const length = this.u64();
    if (length > 1 << 24) throw new Error(`implausible string length ${length} at byte ${this.pos - 8}`);
    this.fill(length);
    const value = this.buffer.toString("utf8", this.pos - this.start, this.pos - this.start + length);
    this.pos += length;
    return value;
  }

  skipValue(type: number, depth: number): void {
    const size = VALUE_SIZES[type];
    if (size !== undefined) this.skip(size);
    else if (type === 8) this.skip(this.u64());
    else if (type === 9 && depth <= 2) {
      const itemType = this.u32();
      const count = this.u64();
      const itemSize = VALUE_SIZES[itemType];
      if (itemSize !== undefined) this.skip(count * itemSize);
      else {
        // Each string or nested array takes at least 8 bytes: a count beyond that is corrupt, not a long loop.
        if (count * 8 > this.size - this.pos) throw new Error(`implausible array length ${count} at byte ${this.pos}`);
        for (let i = 0; i < count; i++) this.skipValue(itemType, depth + 1);
      }
    } else throw new Error(`unknown metadata value type ${type} at byte ${this.pos}`);
  }
}
