import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  type DownloadProgress,
  type DownloadTarget,
  downloadModel,
  ModelDownloader,
} from "../../../src/llm/embedded/download.ts";
import { closedPort } from "../providers/helpers.ts";
import { type ModelServer, startModelServer } from "./modelServer.ts";

// The resumable, verified download against a loopback server that serves a generated file.

const root = mkdtempSync(join(tmpdir(), "assistant-download-"));
const servers: ModelServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  rmSync(root, { recursive: true, force: true });
});

const body = randomBytes(3 * 1024 * 1024 + 123);
const sha256 = createHash("sha256").update(body).digest("hex");

async function serve(options: Parameters<typeof startModelServer>[1] = {}): Promise<ModelServer> {
  const server = await startModelServer(body, options);
  servers.push(server);
  return server;
}

function targetIn(server: ModelServer, overrides: Partial<DownloadTarget> = {}): DownloadTarget {
  const dir = mkdtempSync(join(root, "models-"));
  return {
    model_id: "tiny",
    url: `${server.url}/files/tiny.gguf?token=s3cret-token`,
    sha256,
    size_bytes: body.length,
    path: join(dir, "tiny.gguf"),
    ...overrides,
  };
}

describe("model download", () => {
  it("downloads, verifies the sha256 and moves the file into place atomically, reporting progress", async () => {
    const server = await serve();
    const target = targetIn(server);
    const seen: DownloadProgress[] = [];
    const outcome = await downloadModel(target, { onProgress: (p) => seen.push(p), progressIntervalMs: 0 });

    expect(readFileSync(target.path).equals(body)).toBe(true);
    expect(existsSync(`${target.path}.part`)).toBe(false);
    expect(existsSync(`${target.path}.part.lock`)).toBe(false);
    expect(outcome).toMatchObject({
      status: "completed",
      model_id: "tiny",
      path: target.path,
      bytes_done: body.length,
      bytes_total: body.length,
      percent: 100,
      error: null,
      already_present: false,
    });
    // The query string (a token, on some mirrors) never appears in what is shown.
    expect(outcome.url).toBe(`${server.url}/files/tiny.gguf`);
    expect(JSON.stringify(seen)).not.toContain("s3cret");
    const statuses = seen.map((p) => p.status);
    expect(statuses).toContain("running");
    expect(statuses.indexOf("verifying")).toBeGreaterThan(statuses.indexOf("running"));
    expect(statuses.at(-1)).toBe("completed");
    const running = seen.filter((p) => p.status === "running" && p.bytes_done > 0);
    expect(running.length).toBeGreaterThan(0);
    expect(running.every((p) => p.bytes_total === body.length && p.percent !== null)).toBe(true);
    expect(server.ranges).toEqual([undefined]);

    // Once in place, a new download only verifies it.
    const again = await downloadModel(target);
    expect(again).toMatchObject({ status: "completed", already_present: true, bytes_done: body.length });
    expect(server.ranges).toHaveLength(1);
  });

  it("keeps the .part of an interrupted download and resumes it with a Range request", async () => {
    const server = await serve({ cutAfter: 1024 * 1024 });
    const target = targetIn(server);
    const downloader = new ModelDownloader();

    downloader.start(target);
    const failed = await downloader.wait(target.path);
    expect(failed.status).toBe("failed");
    expect(failed.error).toMatch(/stopped \(.+\) after \d+ bytes; the partial file is kept/);
    expect(existsSync(target.path)).toBe(false);
    const kept = statSync(`${target.path}.part`).size;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(body.length);

    downloader.start(target);
    const done = await downloader.wait(target.path);
    expect(done).toMatchObject({ status: "completed", bytes_done: body.length });
    expect(readFileSync(target.path).equals(body)).toBe(true);
    expect(server.ranges).toEqual([undefined, `bytes=${kept}-`]);
    expect(server.bytesSent).toBeLessThan(2 * body.length);
    expect(server.bytesSent).toBe(body.length + (1024 * 1024 - kept));
  });

  it("returns the running download instead of starting a second one", async () => {
    const server = await serve();
    const target = targetIn(server);
    const downloader = new ModelDownloader();
    const first = downloader.start(target);
    const second = downloader.start(target);
    expect(first.status).toBe("running");
    expect(second).toMatchObject({ status: "running", started_at: first.started_at });
    expect(downloader.running(target.path)).toBe(true);
    expect((await downloader.wait()).status).toBe("completed");
    expect(server.ranges).toHaveLength(1);
    expect(downloader.progress()).toMatchObject({ status: "completed", path: target.path });
    expect(new ModelDownloader().progress()).toMatchObject({ status: "idle", model_id: null });
  });

  it("refuses a sha256 mismatch: the .part is deleted and the previous model file is untouched", async () => {
    const server = await serve();
    const target = targetIn(server, { sha256: "0".repeat(64) });
    writeFileSync(target.path, "the previous model");

    await expect(downloadModel(target)).rejects.toMatchObject({
      message: expect.stringMatching(/sha256 mismatch: expected 0{64}, got [0-9a-f]{64}.*left unchanged/),
    });
    expect(readFileSync(target.path, "utf8")).toBe("the previous model");
    expect(existsSync(`${target.path}.part`)).toBe(false);
  });

  it("restarts cleanly from byte 0 when the server ignores the Range header", async () => {
    const server = await serve({ ranges: false });
    const target = targetIn(server);
    // Bytes that disagree with the server's file: a restart must not keep any of them.
    writeFileSync(`${target.path}.part`, Buffer.alloc(500_000, 7));

    const outcome = await downloadModel(target);
    expect(outcome.status).toBe("completed");
    expect(server.ranges).toEqual(["bytes=500000-"]);
    expect(readFileSync(target.path).equals(body)).toBe(true);
  });

  it("resumes a complete .part without transferring anything", async () => {
    const server = await serve();
    const target = targetIn(server, { size_bytes: undefined });
    writeFileSync(`${target.path}.part`, body);
    const outcome = await downloadModel(target);
    expect(outcome).toMatchObject({ status: "completed", bytes_done: body.length });
    expect(server.ranges).toEqual([`bytes=${body.length}-`]); // answered 416 with the total size
    expect(server.bytesSent).toBe(0);
    expect(readFileSync(target.path).equals(body)).toBe(true);
  });

  it("fails clearly, naming the directory, when the file cannot be written; the previous file stays", async () => {
    const server = await serve();
    const target = targetIn(server);
    writeFileSync(target.path, "the previous model");
    mkdirSync(`${target.path}.part`); // writes to the .part fail, as on a full or read-only disk

    const downloader = new ModelDownloader();
    downloader.start(target);
    const failed = await downloader.wait();
    expect(failed.status).toBe("failed");
    expect(failed.error).toContain(`cannot write the model file in ${join(target.path, "..")}`);
    expect(failed.error).toContain("EISDIR");
    expect(readFileSync(target.path, "utf8")).toBe("the previous model");
  });

  it("fails a stalled download after the stall timeout and keeps what arrived", async () => {
    const server = await serve({ stallAfter: 200_000 });
    const target = targetIn(server);
    const started = performance.now();
    await expect(downloadModel(target, { stallTimeoutMs: 300 })).rejects.toMatchObject({
      message: expect.stringMatching(/no data from .* for 0.3 s; the partial file is kept \(200000 bytes\)/),
    });
    expect(performance.now() - started).toBeLessThan(5000);
    expect(statSync(`${target.path}.part`).size).toBe(200_000);
  });

  it("reports an HTTP error and a refused size without touching the previous file", async () => {
    const server = await serve();
    const missing = targetIn(server, { url: `${server.url}/missing.gguf` });
    await expect(downloadModel(missing)).rejects.toMatchObject({
      code: "provider_unavailable",
      message: expect.stringContaining(`${server.url}/missing.gguf answered HTTP 404`),
    });

    const wrongSize = targetIn(server, { size_bytes: body.length + 1 });
    writeFileSync(wrongSize.path, "the previous model");
    await expect(downloadModel(wrongSize)).rejects.toMatchObject({
      code: "provider_error",
      message: expect.stringContaining(`offers ${body.length} bytes, expected ${body.length + 1}`),
    });
    expect(readFileSync(wrongSize.path, "utf8")).toBe("the previous model");
  });

  it("refuses a second process while the lock of a live one is there", async () => {
    const server = await serve();
    const target = targetIn(server);
    writeFileSync(`${target.path}.part.lock`, String(process.ppid));
    await expect(downloadModel(target)).rejects.toMatchObject({
      code: "conflict",
      message: expect.stringContaining(`pid ${process.ppid}`),
    });
    // A lock whose process is gone is taken over.
    writeFileSync(`${target.path}.part.lock`, "999999999");
    expect((await downloadModel(target)).status).toBe("completed");
  });
});

describe("download failures and the automatic retry backoff", () => {
  it("a refused connection says so; automatic starts wait a doubling backoff; an explicit start tries at once", async () => {
    const port = await closedPort();
    const dir = mkdtempSync(join(root, "offline-"));
    const target: DownloadTarget = {
      model_id: "tiny",
      url: `http://127.0.0.1:${port}/tiny.gguf`,
      sha256,
      path: join(dir, "tiny.gguf"),
    };
    const downloader = new ModelDownloader({ retryBaseMs: 400, retryMaxMs: 1_000 });

    downloader.start(target, { automatic: true });
    const failed = await downloader.wait(target.path);
    expect(failed).toMatchObject({
      status: "failed",
      error: `cannot download from http://127.0.0.1:${port}/tiny.gguf (ECONNREFUSED: the connection was refused)`,
    });
    const firstWait = downloader.retryAt(target.path)! - Date.now();
    expect(firstWait).toBeGreaterThan(300);
    expect(firstWait).toBeLessThanOrEqual(400);

    // Within the backoff an automatic start tries nothing: it answers the failure it has.
    const again = downloader.start(target, { automatic: true });
    expect(again).toMatchObject({ status: "failed", error: failed.error, started_at: failed.started_at });
    expect(downloader.running(target.path)).toBe(false);

    // After it, one more try; its failure doubles the wait, up to retryMaxMs.
    await new Promise((r) => setTimeout(r, firstWait + 20));
    expect(downloader.start(target, { automatic: true }).started_at).not.toBe(failed.started_at);
    await downloader.wait(target.path);
    const secondWait = downloader.retryAt(target.path)! - Date.now();
    expect(secondWait).toBeGreaterThan(700);
    expect(secondWait).toBeLessThanOrEqual(800);
    expect(downloader.start(target, { automatic: true }).status).toBe("failed");
    expect(downloader.running(target.path)).toBe(false);

    // The person asking (`POST /api/router/embedded/download`) starts at once, and a success clears the backoff.
    const server = await serve();
    const explicit = downloader.start({ ...target, url: `${server.url}/tiny.gguf` });
    expect(explicit.status).toBe("running");
    expect(await downloader.wait(target.path)).toMatchObject({ status: "completed" });
    expect(downloader.retryAt(target.path)).toBeUndefined();
  });

  it("a host name that does not resolve is named as a DNS failure or no network", async () => {
    const dir = mkdtempSync(join(root, "dns-"));
    const target: DownloadTarget = {
      model_id: "tiny",
      url: "https://nonexistent.invalid/tiny.gguf",
      sha256,
      path: join(dir, "tiny.gguf"),
    };
    await expect(downloadModel(target)).rejects.toMatchObject({
      message: expect.stringMatching(
        /^cannot download from https:\/\/nonexistent\.invalid\/tiny\.gguf \((ENOTFOUND: the host name does not resolve: no network or a DNS failure|EAI_AGAIN: the DNS lookup failed: no network\?)\)$/,
      ),
    });
    expect(existsSync(target.path)).toBe(false);
  });
});
