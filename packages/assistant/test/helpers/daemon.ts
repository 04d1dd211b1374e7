import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export const packageRoot = resolve(import.meta.dirname, "..", "..");
export const cliBin = join(packageRoot, "bin", "assistant.mjs");
export const daemonBin = join(packageRoot, "bin", "assistant-daemon.mjs");

export function tempDataDir(prefix = "assistant-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface TestDaemon {
  url: string;
  port: number;
  token: string;
  dataDir: string;
  process: ChildProcess;
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts the real `assistant-daemon` on a random port with its own data dir; resolves when it is healthy. Every
 * answer it gives is checked against its route's declaration (ASSISTANT_VALIDATE_RESPONSES): a mismatch is a 500.
 */
export async function startDaemon(
  env: NodeJS.ProcessEnv = {},
  dataDir = tempDataDir(),
  options: { cwd?: string } = {},
): Promise<TestDaemon> {
  const child = spawn(process.execPath, [daemonBin], {
    ...(options.cwd ? { cwd: options.cwd } : {}),
    env: {
      ...process.env,
      ASSISTANT_DATA_DIR: dataDir,
      ASSISTANT_PORT: "0",
      ASSISTANT_LOG: "info",
      ASSISTANT_VALIDATE_RESPONSES: "1",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const infoFile = join(dataDir, "daemon.json");
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`daemon exited with ${child.exitCode}: ${output}`);
    if (existsSync(infoFile)) {
      const info = JSON.parse(readFileSync(infoFile, "utf8")) as { port: number; pid: number };
      if (info.pid === child.pid) {
        const url = `http://127.0.0.1:${info.port}`;
        const token = readFileSync(join(dataDir, "auth_token"), "utf8").trim();
        return {
          url,
          port: info.port,
          token,
          dataDir,
          process: child,
          output: () => output,
          stop: async (signal = "SIGTERM") => {
            if (child.exitCode === null) child.kill(signal);
            return exited;
          },
        };
      }
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill("SIGKILL");
  throw new Error(`daemon did not become ready: ${output}`);
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests inspect response bodies loosely
  json<T = any>(): T;
}

/** A plain HTTP request with full control of headers (fetch forbids setting Host). */
export function raw(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<RawResponse> {
  return new Promise((resolvePromise, reject) => {
    const headers = { ...options.headers };
    if (options.body !== undefined) headers["content-length"] ??= String(Buffer.byteLength(options.body));
    const req = httpRequest(url, { method: options.method ?? "GET", headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8");
        resolvePromise({ status: res.statusCode ?? 0, headers: res.headers, body, json: () => JSON.parse(body) });
      });
    });
    req.on("error", reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

/** An API call to a test daemon with its token (or `token: null` for none); a string body is sent as is. */
export function api(
  daemon: Pick<TestDaemon, "url" | "token">,
  method: string,
  path: string,
  body?: unknown,
  token: string | null = daemon.token,
): Promise<RawResponse> {
  return raw(`${daemon.url}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    ...(body !== undefined ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {}),
  });
}

/** Polls `read` until `ok` accepts its value or `ms` pass; returns the last value (the caller asserts on it). */
export async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 25));
  }
}
