import type { IncomingMessage } from "node:http";

// Node closes the connection right after an answer marked `Connection: close` (every 413, and any answer to a
// client that asked for it). Closed with request bytes still unread, the kernel sends a reset, and the client
// loses the answer it was sent, often before reading it. So an answer given before its request body was read
// (a 413, a route that takes no body) waits until the rest has arrived and been discarded, within bounds.

/** Past this many unread bytes, or this long, the connection is closed anyway: the client has been answered. */
export const DRAIN_LIMITS = { bytes: 64 * 1024 * 1024, ms: 10_000 };

/** Resolves true once the unread rest of the request body is discarded, false if it is beyond the limits. */
export async function drainUnreadBody(request: IncomingMessage, limits = DRAIN_LIMITS): Promise<boolean> {
  if (request.complete || request.destroyed) return true;
  if (Number(request.headers["content-length"]) > limits.bytes) return false;
  return new Promise((resolve) => {
    let seen = 0;
    const finish = (drained: boolean) => {
      clearTimeout(timer);
      request.off("data", count);
      request.off("end", ended);
      request.off("error", failed);
      request.off("close", failed);
      resolve(drained);
    };
    const count = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > limits.bytes) finish(false);
    };
    const ended = () => finish(true);
    const failed = () => finish(false);
    const timer = setTimeout(failed, limits.ms);
    request.on("data", count);
    request.once("end", ended);
    request.once("error", failed);
    request.once("close", failed); // the client went away
    request.resume();
  });
}
