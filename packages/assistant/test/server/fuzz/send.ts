import { request } from "node:http";
import type { FuzzRequest } from "./cases.ts";

// Sends one fuzz request on its own connection (so a reset belongs to that request alone) and reads the answer.
// Event streams are closed after their headers: the fuzzer only checks that they opened.

export interface FuzzAnswer {
  status: number;
  contentType: string;
  body: string;
  ms: number;
}

/** The answer, or why there was none (ECONNRESET, EPIPE, timeout). */
export type FuzzOutcome = { answer: FuzzAnswer; error?: undefined } | { answer?: undefined; error: string; ms: number };

const CHUNK_BYTES = 16 * 1024;

export function sendFuzzRequest(baseUrl: string, fuzz: FuzzRequest, timeoutMs: number): Promise<FuzzOutcome> {
  const url = new URL(baseUrl);
  const body = fuzz.body === undefined ? undefined : Buffer.from(fuzz.body);
  const headers = { ...fuzz.headers };
  // Chunked is asked for by name: Node's client would otherwise send a GET or DELETE body unframed.
  if (body)
    headers[fuzz.chunked ? "transfer-encoding" : "content-length"] = fuzz.chunked ? "chunked" : String(body.length);
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    let settled = false;
    const settle = (outcome: FuzzOutcome) => {
      if (settled) return;
      settled = true;
      req.destroy();
      resolve(outcome);
    };
    const req = request(
      { host: url.hostname, port: url.port, method: fuzz.method, path: fuzz.path, headers, agent: false },
      (res) => {
        const contentType = String(res.headers["content-type"] ?? "");
        const status = res.statusCode ?? 0;
        if (contentType.startsWith("text/event-stream")) {
          settle({ answer: { status, contentType, body: "", ms: elapsed() } });
          return;
        }
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          settle({ answer: { status, contentType, body: Buffer.concat(chunks).toString("utf8"), ms: elapsed() } }),
        );
        res.on("error", (error) =>
          settle({ error: (error as NodeJS.ErrnoException).code ?? error.message, ms: elapsed() }),
        );
      },
    );
    req.setTimeout(timeoutMs, () => settle({ error: `no answer within ${timeoutMs} ms`, ms: elapsed() }));
    req.on("error", (error) =>
      settle({ error: (error as NodeJS.ErrnoException).code ?? error.message, ms: elapsed() }),
    );
    if (body) for (let i = 0; i < body.length; i += CHUNK_BYTES) req.write(body.subarray(i, i + CHUNK_BYTES));
    req.end();
  });
}
