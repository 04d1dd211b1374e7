import { promises as dns, type LookupAddress } from "node:dns";
import type { IncomingMessage } from "node:http";
import type { LookupFunction } from "node:net";
import { isIPv4 } from "node:net";
import type { Readable } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import { SOURCE_DEFAULT } from "./policy/types.ts";
import { type AddressClass, classifyAddress, classifyHost, urlHost } from "./policy/web.ts";
import { ToolDenied, ToolFailure } from "./tool.ts";

// The HTTP client of web_fetch (docs/tools.md#web, SSRF). For every URL, the first and each redirect hop:
//   1. `permit(url)`: the tools policy (scheme, deny list, allow list, non-public hosts listed exactly);
//   2. the host is resolved once and EVERY address classified: a public name that resolves to a loopback,
//      private, link-local (cloud metadata), CGNAT, ... address is refused, as is a listed `localhost` that
//      resolves to anything but loopback;
//   3. the connection goes to the checked addresses only (the socket's `lookup` returns them), so a DNS answer
//      that changes between the check and the connect (rebinding) cannot redirect it; Host and SNI stay the name.
// Redirects are followed by hand (each hop goes through 1-3 again), GET only, no cookies, no credentials; the
// body, the total time and the idle time are capped.

export const DEFAULT_MAX_BYTES = 2 * 1024 * 1024;
export const DEFAULT_TOTAL_TIMEOUT_MS = 20_000;
export const DEFAULT_IDLE_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_REDIRECTS = 5;
export const USER_AGENT = "assistant-web-fetch";

/** Resolves a host name to all its addresses (the default is the system resolver, dns.lookup with all). */
export type HostLookup = (hostname: string) => Promise<LookupAddress[]>;

export interface SafeFetchOptions {
  /** Asks the policy about a URL (the first one and every redirect target); throws (ToolDenied) to refuse. */
  permit: (url: URL) => Promise<unknown>;
  lookup?: HostLookup;
  signal?: AbortSignal;
  maxBytes?: number;
  totalTimeoutMs?: number;
  /** Longest wait for the connection, the headers or the next piece of the body. */
  idleTimeoutMs?: number;
  maxRedirects?: number;
  /** The Accept header; default prefers HTML and text (web_fetch). */
  accept?: string;
}

export interface SafeResponse {
  /** The URL that answered (after redirects). */
  url: URL;
  status: number;
  statusText: string;
  /** Lower-case media type without parameters, "" when the server sent none. */
  mediaType: string;
  /** The charset parameter of Content-Type, if any. */
  charset: string | null;
  body: Buffer;
  /** The body was longer than maxBytes; `body` holds its first maxBytes bytes. */
  truncated: boolean;
  /** The URLs that redirected, in order. */
  redirects: URL[];
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

const defaultLookup: HostLookup = (hostname) => dns.lookup(hostname, { all: true });

function describe(cls: AddressClass): string {
  return cls.replace("_", "-");
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/**
 * The addresses a host may be connected to. `host` is the normalised URL host the policy has already allowed:
 * a public name must resolve to public addresses only; an IP literal is its own address; a listed non-public
 * name (`localhost`) must resolve within its own class.
 */
export async function resolveChecked(host: string, lookup: HostLookup): Promise<LookupAddress[]> {
  const hostClass = classifyHost(host);
  if (host.startsWith("[")) return [{ address: host.slice(1, -1), family: 6 }];
  if (isIPv4(host)) return [{ address: host, family: 4 }];
  let addresses: LookupAddress[];
  try {
    addresses = await lookup(host);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ToolFailure(`could not resolve ${host}${code ? ` (${code})` : ""}`);
  }
  if (addresses.length === 0) throw new ToolFailure(`could not resolve ${host} (no addresses)`);
  for (const { address } of addresses) {
    const cls = classifyAddress(address);
    if (cls === "public" || cls === hostClass) continue;
    const rule = `SSRF protection: ${host} resolves to ${address} (${describe(cls)})`;
    throw new ToolDenied(
      rule,
      SOURCE_DEFAULT,
      `${host} resolves to ${address} (${describe(cls)}); refused (SSRF protection). A name on the public web may ` +
        `not lead to a ${describe(cls)} address; list the address itself in allowed_web_domains to reach it.`,
    );
  }
  return addresses;
}

/** A socket lookup that only ever answers with the checked addresses. */
function pinnedLookup(addresses: readonly LookupAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    const family = options.family === 4 || options.family === 6 ? options.family : 0;
    const usable = family === 0 ? addresses : addresses.filter((a) => a.family === family);
    const first = usable[0];
    if (!first) {
      const error: NodeJS.ErrnoException = new Error(`no IPv${family} address was checked for this host`);
      error.code = "ENOTFOUND";
      callback(error, "", 0);
      return;
    }
    if (options.all)
      callback(
        null,
        usable.map((a) => ({ address: a.address, family: a.family })),
      );
    else callback(null, first.address, first.family);
  };
}

/** Fetches `url` with GET under the SSRF rules above. HTTP error statuses are returned, not thrown. */
export async function safeFetch(url: URL, options: SafeFetchOptions): Promise<SafeResponse> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const totalMs = options.totalTimeoutMs ?? DEFAULT_TOTAL_TIMEOUT_MS;
  const idleMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  const lookup = options.lookup ?? defaultLookup;

  const controller = new AbortController();
  // The time limit counts the network only: waiting for the review queue (a permit that asks) is not fetching.
  let budget = totalMs;
  let timer: NodeJS.Timeout | undefined;
  let started = 0;
  const startClock = () => {
    started = Date.now();
    timer = setTimeout(
      () => controller.abort(new ToolFailure(`timed out after ${seconds(totalMs)} (the limit for one fetch)`)),
      Math.max(0, budget),
    );
  };
  const stopClock = () => {
    clearTimeout(timer);
    budget -= Date.now() - started;
  };
  const outer = options.signal;
  const onOuterAbort = () => controller.abort(outer?.reason ?? new Error("cancelled"));
  if (outer?.aborted) onOuterAbort();
  else outer?.addEventListener("abort", onOuterAbort, { once: true });

  try {
    const redirects: URL[] = [];
    let current = url;
    for (let hop = 0; ; hop++) {
      if (current.username !== "" || current.password !== "") {
        throw new ToolFailure(
          `${current.origin} carries a user name or password in the URL; such URLs are not fetched`,
        );
      }
      throwIfAborted(controller.signal);
      if (hop === 0) await options.permit(current);
      else await permitRedirect(options.permit, redirects[redirects.length - 1]!, current);
      throwIfAborted(controller.signal);
      startClock();
      const host = urlHost(current);
      if (host === null) throw new ToolFailure(`${current.href} has no valid host`);
      const addresses = await raceAbort(resolveChecked(host, lookup), controller.signal);
      const res = await raceAbort(send(current, addresses, idleMs, controller, options.accept), controller.signal);
      const location = res.headers.location;
      if (REDIRECTS.has(res.statusCode ?? 0) && location) {
        res.destroy();
        stopClock();
        if (hop >= maxRedirects) {
          throw new ToolFailure(`too many redirects (more than ${maxRedirects}); stopped at ${current.href}`);
        }
        let next: URL;
        try {
          next = new URL(location, current);
        } catch {
          throw new ToolFailure(`${current.href} redirects to an invalid URL`);
        }
        redirects.push(current);
        current = next;
        continue;
      }
      const { body, truncated } = await readBody(res, maxBytes, idleMs, controller);
      const contentType = res.headers["content-type"] ?? "";
      const semi = contentType.indexOf(";");
      const mediaType = (semi < 0 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
      return {
        url: current,
        status: res.statusCode ?? 0,
        statusText: res.statusMessage ?? "",
        mediaType,
        charset: charsetOf(contentType),
        body,
        truncated,
        redirects,
      };
    }
  } catch (error) {
    if (controller.signal.aborted) {
      const reason: unknown = controller.signal.reason;
      if (reason instanceof ToolFailure) throw reason;
      if (outer?.aborted) throw reason instanceof Error ? reason : new Error("cancelled");
    }
    throw error;
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener("abort", onOuterAbort);
  }
}

async function permitRedirect(permit: SafeFetchOptions["permit"], from: URL, to: URL): Promise<void> {
  try {
    await permit(to);
  } catch (error) {
    if (error instanceof ToolDenied) {
      throw new ToolDenied(
        error.rule,
        error.source,
        `${from.href} redirects to ${to.href}, which is refused: ${error.message}`,
        error.queueItemId,
      );
    }
    throw error;
  }
}

function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new Error("aborted");
}

/** Settles with `promise`, or rejects as soon as `signal` aborts. */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

function networkFailure(url: URL, error: Error): ToolFailure {
  const code = (error as NodeJS.ErrnoException).code;
  return new ToolFailure(`could not fetch ${url.href}: ${code ? `${code} ` : ""}${error.message}`.trim());
}

/** One GET to the checked addresses; resolves with the response head. */
function send(
  url: URL,
  addresses: readonly LookupAddress[],
  idleMs: number,
  controller: AbortController,
  accept = "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.5",
): Promise<IncomingMessage> {
  // Not `import ... from "node:http"`: an ESM import of node:http fills its lazy exports (fetch's undici), ~30 ms
  // of every daemon start; getBuiltinModule returns the module as require() does.
  const { request } = process.getBuiltinModule(url.protocol === "https:" ? "node:https" : "node:http");
  const hostname = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  return new Promise<IncomingMessage>((resolve, reject) => {
    const req = request({
      protocol: url.protocol,
      hostname,
      port: url.port === "" ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method: "GET",
      headers: {
        "User-Agent": USER_AGENT,
        Accept: accept,
        "Accept-Encoding": "gzip, deflate, br",
      },
      agent: false, // a fresh connection per hop: no pooled socket to another address
      lookup: pinnedLookup(addresses),
      signal: controller.signal,
    });
    req.setTimeout(idleMs, () => {
      controller.abort(new ToolFailure(`${url.host} sent nothing for ${seconds(idleMs)}; gave up`));
    });
    req.once("response", resolve);
    // `on`, not `once`: a destroyed request may report more than one error, and an unheard one would crash.
    req.on("error", (error) =>
      reject(controller.signal.aborted ? controller.signal.reason : networkFailure(url, error)),
    );
    req.end();
  });
}

/** Reads the (decoded) body up to `maxBytes`; stops reading there. */
function readBody(
  res: IncomingMessage,
  maxBytes: number,
  idleMs: number,
  controller: AbortController,
): Promise<{ body: Buffer; truncated: boolean }> {
  const encoding = String(res.headers["content-encoding"] ?? "")
    .trim()
    .toLowerCase();
  let stream: Readable = res;
  if (encoding === "gzip" || encoding === "x-gzip") stream = res.pipe(createGunzip());
  else if (encoding === "deflate") stream = res.pipe(createInflate());
  else if (encoding === "br") stream = res.pipe(createBrotliDecompress());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let settled = false;
    let idle: NodeJS.Timeout | undefined;
    const finish = (error: unknown, truncated = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(idle);
      controller.signal.removeEventListener("abort", onAbort);
      if (error) {
        res.destroy();
        if (stream !== res) stream.destroy();
        reject(error);
      } else resolve({ body: Buffer.concat(chunks, total), truncated });
    };
    const onAbort = () => finish(controller.signal.reason);
    const armIdle = () => {
      clearTimeout(idle);
      idle = setTimeout(
        () => controller.abort(new ToolFailure(`the body stopped arriving (nothing for ${seconds(idleMs)}); gave up`)),
        idleMs,
      );
    };
    controller.signal.addEventListener("abort", onAbort, { once: true });
    armIdle();
    stream.on("data", (chunk: Buffer) => {
      if (settled) return;
      armIdle();
      const room = maxBytes - total;
      if (chunk.length > room) {
        if (room > 0) {
          chunks.push(chunk.subarray(0, room));
          total += room;
        }
        settled = true;
        clearTimeout(idle);
        controller.signal.removeEventListener("abort", onAbort);
        res.destroy();
        if (stream !== res) stream.destroy();
        resolve({ body: Buffer.concat(chunks, total), truncated: true });
        return;
      }
      chunks.push(chunk);
      total += chunk.length;
    });
    stream.once("end", () => finish(null));
    const broken = (error?: Error) =>
      finish(
        controller.signal.aborted
          ? controller.signal.reason
          : new ToolFailure(
              `the connection broke before the whole body arrived${error?.message ? ` (${error.message})` : ""}`,
            ),
      );
    stream.on("error", broken);
    if (stream !== res) res.on("error", broken);
    res.once("aborted", () => broken());
    res.once("close", () => {
      if (!res.complete) broken();
    });
  });
}

/** The charset parameter of a Content-Type value, lower case, or null. */
export function charsetOf(contentType: string): string | null {
  const lower = contentType.toLowerCase();
  const at = lower.indexOf("charset=");
  if (at < 0) return null;
  let value = lower.slice(at + 8).trim();
  if (value.startsWith('"') || value.startsWith("'")) value = value.slice(1);
  let end = 0;
  while (end < value.length && /[a-z0-9_.:-]/.test(value[end]!)) end++;
  return end === 0 ? null : value.slice(0, end);
}
