import { Agent, type IncomingMessage, type OutgoingHttpHeaders, request } from "node:http";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";

// The `fetch` the AI SDK providers get for model servers on plain http:// (llama-server, Ollama, vLLM, LM Studio,
// mostly on this machine or the LAN): node:http over a keep-alive agent. Global fetch (undici) costs about twice
// the daemon's CPU per model call (request and response objects, its body streams); under 200 concurrent chats
// that was the largest single item of the daemon's CPU per turn (bench/load). Anything it does not handle the same
// way goes to global fetch unchanged: https:// (TLS), Request objects, bodies other than a string, redirects.
// It keeps fetch's contract where the providers and the router depend on it: an abort rejects with the signal's
// reason (before the answer) or errors the body stream with it (during); no answer at all rejects with
// TypeError("fetch failed") whose cause carries the system error code (ECONNREFUSED...); a connection cut
// mid-answer errors the body with TypeError("terminated").

const agent = new Agent({ keepAlive: true });
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const DECODERS: Record<string, () => NodeJS.ReadWriteStream> = {
  gzip: createGunzip,
  "x-gzip": createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

export const httpFetch: typeof fetch = (input, init) => {
  const url = typeof input === "string" ? input : input instanceof URL ? input.href : undefined;
  const body = init?.body;
  if (!url?.startsWith("http:") || (body != null && typeof body !== "string")) return fetch(input, init);
  return send(url, init ?? {}, body ?? undefined, true);
};

function send(url: string, init: RequestInit, body: string | undefined, mayRetry: boolean): Promise<Response> {
  const signal = init.signal ?? undefined;
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const headers = headersOf(init.headers);
    headers.accept ??= "*/*";
    if (body !== undefined) headers["content-length"] = Buffer.byteLength(body);
    /** Set once the answer's headers arrived: errors then go to its body stream. */
    let failBody: ((error: unknown) => void) | undefined;
    const req = request(url, { method: init.method ?? "GET", headers, agent });
    const onAbort = () => {
      req.destroy();
      if (failBody) failBody(signal?.reason);
      else reject(signal?.reason);
    };
    const done = () => signal?.removeEventListener("abort", onAbort);
    signal?.addEventListener("abort", onAbort, { once: true });
    req.on("error", (error: NodeJS.ErrnoException) => {
      if (failBody || signal?.aborted) return;
      done();
      // A kept-alive connection the server closed while idle fails before the request reached it: try once more.
      if (mayRetry && req.reusedSocket && error.code === "ECONNRESET") {
        send(url, init, body, false).then(resolve, reject);
        return;
      }
      reject(new TypeError("fetch failed", { cause: error }));
    });
    req.on("response", (res) => {
      const status = res.statusCode ?? 0;
      if (REDIRECT_STATUSES.has(status) && res.headers.location) {
        // Rare for a model server; global fetch follows redirects as the providers expect.
        failBody = () => {};
        done();
        res.resume();
        fetch(url, init).then(resolve, reject);
        return;
      }
      const stream = NULL_BODY_STATUSES.has(status) ? null : bodyStream(res, done);
      failBody = stream ? stream.fail : () => {};
      if (!stream) done();
      resolve(
        new Response(stream?.body ?? null, {
          status,
          statusText: res.statusMessage ?? "",
          headers: responseHeaders(res.rawHeaders),
        }),
      );
    });
    req.end(body);
  });
}

/** The answer's body as a web stream; `done` runs once it ended, failed or was cancelled. */
function bodyStream(res: IncomingMessage, done: () => void) {
  const encoding = String(res.headers["content-encoding"] ?? "").toLowerCase();
  const decoder = DECODERS[encoding]?.();
  const source: NodeJS.ReadableStream = decoder ? res.pipe(decoder) : res;
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let settled = false;
  const settle = () => {
    if (settled) return false;
    settled = true;
    done();
    return true;
  };
  const fail = (error: unknown) => {
    if (settle()) controller.error(error);
  };
  // undici's wording for an answer cut short, without a system code, so such failures read and classify the same.
  const cut = (why: string) => fail(new TypeError("terminated", { cause: new Error(why) }));
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
      source.on("data", (chunk: Buffer) => {
        if (!settled) controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      });
      source.on("end", () => {
        if (settle()) controller.close();
      });
      res.on("close", () => {
        if (!res.complete) cut("the server closed the connection");
      });
      res.on("error", () => cut("the server closed the connection"));
      if (decoder) decoder.on("error", (error) => cut(error.message));
    },
    cancel() {
      settle();
      res.destroy();
    },
  });
  return { body, fail };
}

/** Request headers as node:http takes them, from any HeadersInit (the AI SDK passes a plain object). */
function headersOf(init: RequestInit["headers"]): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {};
  if (!init) return headers;
  if (init instanceof Headers || Array.isArray(init)) {
    for (const [name, value] of init instanceof Headers ? init.entries() : init) headers[name.toLowerCase()] = value;
    return headers;
  }
  for (const [name, value] of Object.entries(init as Record<string, string | undefined>)) {
    if (value !== undefined) headers[name.toLowerCase()] = value;
  }
  return headers;
}

function responseHeaders(raw: string[]): Headers {
  const headers = new Headers();
  for (let i = 0; i < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  return headers;
}
