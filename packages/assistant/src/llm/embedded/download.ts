import { createHash, type Hash } from "node:crypto";
import { createReadStream } from "node:fs";
import { type FileHandle, mkdir, open, readFile, rename, rm, stat } from "node:fs/promises";
import { basename, dirname } from "node:path";
import { z } from "zod";
import { processAlive } from "../../runtime/daemonInfo.ts";
import { AppError } from "../../util/errors.ts";
import type { ResolvedEmbeddedModel } from "./catalogue.ts";

// Downloads an embedded model's GGUF file. Resumable: bytes go to `<path>.part`, and a new start asks the server
// for the rest with an HTTP Range from the .part size (the hash is rebuilt from the bytes already there). The file
// becomes `<path>` only once its size and sha256 match, by fsync + rename, so a failed or wrong download never
// replaces a good model. A `<path>.part.lock` file keeps the daemon and the CLI from writing the same .part.

export interface DownloadTarget {
  model_id: string;
  url: string;
  sha256: string;
  size_bytes?: number;
  path: string;
}

export const DOWNLOAD_STATUSES = ["idle", "running", "verifying", "completed", "failed"] as const;
export type DownloadStatus = (typeof DOWNLOAD_STATUSES)[number];

/** What `GET /api/router/embedded/download` and the CLI show. */
export const downloadProgressSchema = z
  .object({
    status: z.enum(DOWNLOAD_STATUSES),
    model_id: z.string().nullable(),
    /** Scheme, host and path only: a query string may carry a token. */
    url: z.string().nullable(),
    path: z.string().nullable(),
    bytes_done: z.number(),
    bytes_total: z.number().nullable(),
    percent: z.number().nullable(),
    speed_bps: z.number(),
    error: z.string().nullable(),
    started_at: z.string().nullable(),
    updated_at: z.string().nullable(),
  })
  .meta({ id: "DownloadProgress" });

export type DownloadProgress = z.infer<typeof downloadProgressSchema>;

export interface DownloadOptions {
  onProgress?: (progress: DownloadProgress) => void;
  signal?: AbortSignal;
  /** A download that receives nothing for this long fails (resumable). Default 60 s. */
  stallTimeoutMs?: number;
  /** Minimum gap between two running-progress callbacks. Default 250 ms. */
  progressIntervalMs?: number;
}

export type DownloadOutcome = DownloadProgress & {
  /** The file was already there with the right sha256: nothing was transferred. */
  already_present: boolean;
};

const STALL_TIMEOUT_MS = 60_000;
const PROGRESS_INTERVAL_MS = 250;
const DISK_ERRORS = new Set(["ENOSPC", "EDQUOT", "EROFS", "EACCES", "EPERM", "EISDIR", "ENOTDIR", "EIO", "EFBIG"]);
const DISK_REASONS: Record<string, string> = {
  ENOSPC: "no space left on the device",
  EDQUOT: "disk quota exceeded",
  EROFS: "read-only file system",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EISDIR: "a directory is in the way",
  ENOTDIR: "a file is in the way of a directory",
  EIO: "input/output error",
  EFBIG: "file too large for the file system",
};

/** Why a connection failed, for a person who may be offline. */
const NETWORK_REASONS: Record<string, string> = {
  ENOTFOUND: "the host name does not resolve: no network or a DNS failure",
  EAI_AGAIN: "the DNS lookup failed: no network?",
  ECONNREFUSED: "the connection was refused",
  ECONNRESET: "the connection was reset",
  ETIMEDOUT: "the connection timed out",
  ENETUNREACH: "the network is unreachable: no network?",
  EHOSTUNREACH: "no route to the host: no network?",
};

/** The download target of a catalogue model; a custom file (ASSISTANT_EMBEDDED_MODEL_PATH) has none. */
export function downloadTarget(model: ResolvedEmbeddedModel): DownloadTarget {
  if (model.custom || !model.url || !model.sha256) {
    throw new AppError(
      "invalid_request",
      `ASSISTANT_EMBEDDED_MODEL_PATH names ${model.path}, a local file: there is nothing to download`,
    );
  }
  return {
    model_id: model.model_id,
    url: model.url,
    sha256: model.sha256,
    ...(model.size_bytes !== undefined ? { size_bytes: model.size_bytes } : {}),
    path: model.path,
  };
}

export function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return "(invalid URL)";
  }
}

export function idleProgress(
  target?: Pick<DownloadTarget, "model_id" | "url" | "path" | "size_bytes">,
): DownloadProgress {
  return {
    status: "idle",
    model_id: target?.model_id ?? null,
    url: target ? displayUrl(target.url) : null,
    path: target?.path ?? null,
    bytes_done: 0,
    bytes_total: target?.size_bytes ?? null,
    percent: null,
    speed_bps: 0,
    error: null,
    started_at: null,
    updated_at: null,
  };
}

/** Downloads (or resumes) `target`; resolves when the file is in place and verified, else throws an AppError. */
export async function downloadModel(target: DownloadTarget, options: DownloadOptions = {}): Promise<DownloadOutcome> {
  const tracker = new Tracker(target, options);
  const dir = dirname(target.path);
  try {
    if (await fileMatches(target, tracker)) return { ...tracker.finish("completed"), already_present: true };
    await onDisk(dir, () => mkdir(dir, { recursive: true, mode: 0o700 }));
    const release = await lock(target, dir);
    try {
      await transfer(target, tracker, options);
    } finally {
      await release();
    }
    return { ...tracker.finish("completed"), already_present: false };
  } catch (error) {
    const failure =
      error instanceof AppError
        ? error
        : options.signal?.aborted
          ? new AppError(
              "provider_unavailable",
              "download cancelled; the partial file is kept and the next start resumes",
            )
          : new AppError("internal", `download failed: ${(error as Error).message}`);
    tracker.finish("failed", failure.message);
    throw failure;
  }
}

/** True when `target.path` already holds the expected file (hashes it: about a second per 500 MB). */
async function fileMatches(target: DownloadTarget, tracker: Tracker): Promise<boolean> {
  const info = await stat(target.path).catch(() => undefined);
  if (!info?.isFile()) return false;
  if (target.size_bytes !== undefined && info.size !== target.size_bytes) return false;
  tracker.set("verifying", info.size, info.size);
  const hash = createHash("sha256");
  await hashInto(hash, target.path, info.size);
  return hash.digest("hex") === target.sha256.toLowerCase();
}

async function transfer(target: DownloadTarget, tracker: Tracker, options: DownloadOptions): Promise<void> {
  const dir = dirname(target.path);
  const part = `${target.path}.part`;
  const handle = await onDisk(dir, () => open(part, "a+", 0o600));
  try {
    let offset = (await handle.stat()).size;
    if (target.size_bytes !== undefined && offset > target.size_bytes) {
      await onDisk(dir, () => handle.truncate(0));
      offset = 0;
    }
    const sink: Sink = { handle, dir, hash: createHash("sha256") };
    if (offset > 0) {
      tracker.set("verifying", offset, target.size_bytes ?? null);
      await hashInto(sink.hash, part, offset);
    }
    tracker.set("running", offset, target.size_bytes ?? null);
    const complete = offset > 0 && offset === target.size_bytes;
    const done = complete ? offset : await receive(target, sink, offset, tracker, options);

    tracker.set("verifying", done, done);
    await onDisk(dir, () => handle.sync());
    const digest = sink.hash.digest("hex");
    const expected = target.sha256.toLowerCase();
    const wrongSize = target.size_bytes !== undefined && done !== target.size_bytes;
    if (wrongSize || digest !== expected) {
      await handle.close();
      await rm(part, { force: true });
      const what = wrongSize
        ? `size mismatch: expected ${target.size_bytes} bytes, got ${done}`
        : `sha256 mismatch: expected ${expected}, got ${digest}`;
      throw new AppError(
        "provider_error",
        `${what} for ${basename(target.path)} from ${displayUrl(target.url)}; the download was discarded and ${target.path} was left unchanged`,
      );
    }
    await handle.close();
    await onDisk(dir, () => rename(part, target.path));
    await syncDir(dir);
  } finally {
    await handle.close().catch(() => {});
  }
}

/** The open .part file and the running sha256 of its bytes. */
interface Sink {
  handle: FileHandle;
  dir: string;
  hash: Hash;
}

/** Streams the response into the .part file; returns the final size. Restarts from 0 when the server must. */
async function receive(
  target: DownloadTarget,
  sink: Sink,
  startOffset: number,
  tracker: Tracker,
  options: DownloadOptions,
): Promise<number> {
  const where = displayUrl(target.url);
  const controller = new AbortController();
  const stallMs = options.stallTimeoutMs ?? STALL_TIMEOUT_MS;
  let stalled = false;
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      stalled = true;
      controller.abort(new Error("stalled"));
    }, stallMs);
  };
  const forwardAbort = () => controller.abort(options.signal?.reason);
  options.signal?.addEventListener("abort", forwardAbort, { once: true });
  if (options.signal?.aborted) forwardAbort();

  let offset = startOffset;
  let done = offset;
  try {
    for (let attempt = 0; ; attempt++) {
      arm();
      const response = await fetch(target.url, {
        headers: offset > 0 ? { range: `bytes=${offset}-` } : {},
        signal: controller.signal,
        redirect: "follow",
      });
      const range = parseContentRange(response.headers.get("content-range"));
      if (response.status === 416 && offset > 0) {
        await response.body?.cancel();
        if (range?.total === offset) return offset; // the .part was already whole
        if (attempt > 0) throw new AppError("provider_unavailable", `${where} refused the byte range of the download`);
        offset = await restart(sink);
        continue;
      }
      if (!response.ok || !response.body) {
        await response.body?.cancel();
        throw new AppError(
          "provider_unavailable",
          `${where} answered HTTP ${response.status}; check the URL or try again later${offset > 0 ? " (the partial download is kept)" : ""}`,
        );
      }
      if (offset > 0 && (response.status !== 206 || range?.start !== offset)) {
        // The server ignored the range (200) or answered another one: start over with this body when it is whole.
        if (response.status !== 200) {
          await response.body.cancel();
          offset = await restart(sink);
          continue;
        }
        offset = await restart(sink);
      }
      const length = Number(response.headers.get("content-length"));
      const total = range?.total ?? (Number.isFinite(length) && length > 0 ? offset + length : null);
      if (total !== null && target.size_bytes !== undefined && total !== target.size_bytes) {
        await response.body.cancel();
        await restart(sink);
        throw new AppError(
          "provider_error",
          `size mismatch: ${where} offers ${total} bytes, expected ${target.size_bytes}; nothing was kept and ${target.path} was left unchanged`,
        );
      }
      done = offset;
      tracker.set("running", done, total ?? target.size_bytes ?? null);
      for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
        arm();
        await onDisk(sink.dir, () => writeAll(sink.handle, chunk));
        sink.hash.update(chunk);
        done += chunk.byteLength;
        tracker.set("running", done, total ?? target.size_bytes ?? null);
      }
      if (total !== null && done < total) {
        throw new AppError(
          "provider_unavailable",
          `the download from ${where} ended early at ${done} of ${total} bytes; the partial file is kept and the next start resumes`,
        );
      }
      return done;
    }
  } catch (error) {
    if (error instanceof AppError) throw error;
    if (stalled) {
      throw new AppError(
        "provider_unavailable",
        `no data from ${where} for ${stallMs / 1000} s; the partial file is kept (${done} bytes) and the next start resumes`,
      );
    }
    if (options.signal?.aborted) throw error;
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const code = cause?.code;
    const why = code
      ? `${code}${NETWORK_REASONS[code] ? `: ${NETWORK_REASONS[code]}` : ""}`
      : (cause?.message ?? (error as Error).message);
    if (done === 0) throw new AppError("provider_unavailable", `cannot download from ${where} (${why})`);
    throw new AppError(
      "provider_unavailable",
      `the download from ${where} stopped (${why}) after ${done} bytes; the partial file is kept and the next start resumes`,
    );
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", forwardAbort);
  }
}

/** Empties the .part file and its hash for a download from byte 0. */
async function restart(sink: Sink): Promise<number> {
  await onDisk(sink.dir, () => sink.handle.truncate(0));
  sink.hash = createHash("sha256");
  return 0;
}

async function writeAll(handle: FileHandle, chunk: Uint8Array): Promise<void> {
  let written = 0;
  while (written < chunk.byteLength) {
    const { bytesWritten } = await handle.write(chunk, written, chunk.byteLength - written);
    written += bytesWritten;
  }
}

async function hashInto(hash: Hash, path: string, length: number): Promise<void> {
  if (length === 0) return;
  for await (const chunk of createReadStream(path, { start: 0, end: length - 1, highWaterMark: 1 << 20 })) {
    hash.update(chunk as Buffer);
  }
}

function parseContentRange(value: string | null): { start: number | null; total: number | null } | undefined {
  const match = value?.match(/^bytes\s+(?:(\d+)-\d+|\*)\/(\d+|\*)$/i);
  if (!match) return undefined;
  return {
    start: match[1] !== undefined ? Number(match[1]) : null,
    total: match[2] !== "*" ? Number(match[2]) : null,
  };
}

/** Runs a file-system step; disk failures become a message naming the directory (the .part file is kept). */
async function onDisk<T>(dir: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code && DISK_ERRORS.has(code)) {
      throw new AppError(
        "internal",
        `cannot write the model file in ${dir}: ${DISK_REASONS[code]} (${code}); free space or fix permissions there, then start the download again (it resumes)`,
      );
    }
    throw error;
  }
}

async function syncDir(dir: string): Promise<void> {
  if (process.platform === "win32") return; // directories cannot be opened for fsync on Windows
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Takes `<path>.part.lock`; a lock left by a dead process is taken over. */
async function lock(target: DownloadTarget, dir: string): Promise<() => Promise<void>> {
  const file = `${target.path}.part.lock`;
  for (let attempt = 0; ; attempt++) {
    try {
      const handle = await onDisk(dir, () => open(file, "wx", 0o600));
      await handle.writeFile(String(process.pid));
      await handle.close();
      return () => rm(file, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST" || attempt > 0) throw error;
      const pid = Number((await readFile(file, "utf8").catch(() => "")).trim());
      if (Number.isInteger(pid) && pid > 0 && (pid === process.pid || processAlive(pid))) {
        throw new AppError(
          "conflict",
          `another process (pid ${pid}) is already downloading ${basename(target.path)}; wait for it to finish`,
        );
      }
      await rm(file, { force: true });
    }
  }
}

/** Keeps the progress object and reports it: every status change, and running updates at most every interval. */
class Tracker {
  private readonly onProgress: ((progress: DownloadProgress) => void) | undefined;
  private readonly intervalMs: number;
  private firstBytes: { at: number; bytes: number } | undefined;
  private lastReport = 0;
  current: DownloadProgress;

  constructor(target: DownloadTarget, options: DownloadOptions) {
    this.onProgress = options.onProgress;
    this.intervalMs = options.progressIntervalMs ?? PROGRESS_INTERVAL_MS;
    const now = new Date().toISOString();
    this.current = { ...idleProgress(target), status: "running", started_at: now, updated_at: now };
    this.report();
  }

  set(status: DownloadStatus, bytesDone: number, bytesTotal: number | null): void {
    const changed = status !== this.current.status;
    const now = performance.now();
    if (status === "running") {
      // Speed counts the bytes of this session only, not those resumed from the .part file.
      if (!this.firstBytes || bytesDone < this.firstBytes.bytes) this.firstBytes = { at: now, bytes: bytesDone };
    }
    const seconds = this.firstBytes ? (now - this.firstBytes.at) / 1000 : 0;
    this.current = {
      ...this.current,
      status,
      bytes_done: bytesDone,
      bytes_total: bytesTotal,
      percent: bytesTotal ? Math.floor((bytesDone / bytesTotal) * 1000) / 10 : null,
      speed_bps:
        this.firstBytes && seconds > 0
          ? Math.round((bytesDone - this.firstBytes.bytes) / seconds)
          : this.current.speed_bps,
      updated_at: new Date().toISOString(),
    };
    if (changed || now - this.lastReport >= this.intervalMs) this.report();
  }

  finish(status: "completed" | "failed", error?: string): DownloadProgress {
    this.current = {
      ...this.current,
      status,
      error: error ?? null,
      ...(status === "completed"
        ? { bytes_done: this.current.bytes_total ?? this.current.bytes_done, percent: 100 }
        : {}),
      updated_at: new Date().toISOString(),
    };
    if (status === "completed" && this.current.bytes_total === null) {
      this.current.bytes_total = this.current.bytes_done;
    }
    this.report();
    return this.current;
  }

  private report(): void {
    this.lastReport = performance.now();
    this.onProgress?.({ ...this.current });
  }
}

interface Job {
  progress: DownloadProgress;
  active: boolean;
  controller: AbortController;
  done: Promise<DownloadProgress>;
  /** Failed downloads in a row (reset by a success or an explicit start). */
  failures: number;
  /** When an automatic start may try again after a failure (Date.now() ms). */
  retryAt: number;
}

export interface ModelDownloaderOptions {
  stallTimeoutMs?: number;
  /** Every progress update of every download (the daemon turns them into events). */
  onProgress?: (progress: DownloadProgress) => void;
  /** Wait after the first failure before an automatic start tries again; doubles per failure. Default 1 min. */
  retryBaseMs?: number;
  /** Longest wait between automatic tries. Default 1 h. */
  retryMaxMs?: number;
}

const RETRY_BASE_MS = 60_000;
const RETRY_MAX_MS = 60 * 60_000;

/**
 * The daemon's downloads: one at a time per target path. A start while that path is downloading returns the
 * running progress instead of a second download; a start after it ended begins again (resuming a .part).
 * An automatic start (a chat that needs the model) after a failure waits: 1 min, doubling up to 1 h, so a machine
 * without network does not try again on every message; an explicit start (the person asked) always tries.
 */
export class ModelDownloader {
  private readonly jobs = new Map<string, Job>();
  private readonly options: ModelDownloaderOptions;
  private lastPath: string | undefined;

  constructor(options: ModelDownloaderOptions = {}) {
    this.options = options;
  }

  /**
   * Starts (or joins) the download of `target`. With `automatic`, a download that failed less than its backoff
   * ago is not tried again: the failed progress is returned (`retryAt` says when the next try may start).
   */
  start(target: DownloadTarget, options: { automatic?: boolean } = {}): DownloadProgress {
    const existing = this.jobs.get(target.path);
    if (existing?.active) return existing.progress;
    if (options.automatic && existing && existing.failures > 0 && Date.now() < existing.retryAt) {
      return { ...existing.progress };
    }
    const controller = new AbortController();
    const job: Job = {
      progress: idleProgress(target),
      active: true,
      controller,
      done: Promise.resolve(idleProgress()),
      failures: options.automatic ? (existing?.failures ?? 0) : 0,
      retryAt: 0,
    };
    this.jobs.set(target.path, job);
    this.lastPath = target.path;
    job.done = downloadModel(target, {
      signal: controller.signal,
      ...(this.options.stallTimeoutMs !== undefined ? { stallTimeoutMs: this.options.stallTimeoutMs } : {}),
      onProgress: (progress) => {
        job.progress = progress;
        this.options.onProgress?.(progress);
      },
    })
      .catch(() => {}) // the failure is in job.progress (status failed, error)
      .then(() => {
        job.active = false;
        if (job.progress.status === "failed" && !controller.signal.aborted) {
          job.failures++;
          const base = this.options.retryBaseMs ?? RETRY_BASE_MS;
          job.retryAt = Date.now() + Math.min(this.options.retryMaxMs ?? RETRY_MAX_MS, base * 2 ** (job.failures - 1));
        } else job.failures = 0;
        return job.progress;
      });
    return job.progress;
  }

  /** When an automatic start may try `path` again after a failure; undefined when nothing holds it back. */
  retryAt(path: string): number | undefined {
    const job = this.jobs.get(path);
    return job && !job.active && job.failures > 0 && Date.now() < job.retryAt ? job.retryAt : undefined;
  }

  /** Progress of the download to `path`, or of the latest one; idle when there was none. */
  progress(path?: string): DownloadProgress {
    const key = path ?? this.lastPath;
    const job = key ? this.jobs.get(key) : undefined;
    return job ? { ...job.progress } : { ...idleProgress(), path: path ?? null };
  }

  running(path: string): boolean {
    return this.jobs.get(path)?.active === true;
  }

  /** Resolves with the final progress (completed or failed) of the download to `path` (or the latest one). */
  wait(path?: string): Promise<DownloadProgress> {
    const key = path ?? this.lastPath;
    const job = key ? this.jobs.get(key) : undefined;
    return job ? job.done : Promise.resolve(this.progress(path));
  }

  /** Stops every running download; their .part files stay for the next start. */
  async close(): Promise<void> {
    const active = [...this.jobs.values()].filter((job) => job.active);
    for (const job of active) job.controller.abort(new Error("the downloader is closing"));
    await Promise.all(active.map((job) => job.done));
  }
}
