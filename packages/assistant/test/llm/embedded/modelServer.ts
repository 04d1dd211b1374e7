import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

// A loopback HTTP server that serves one file the way a model host does (Range requests, 206/416), with switches
// to misbehave: cut the connection midway, ignore Range, or stall; a path containing "missing" is a 404.

export interface ModelServerOptions {
  /** Answer a Range request with 206 (true) or the whole file with 200 (false). Default true. */
  ranges?: boolean;
  /** Destroy the socket after this many body bytes of the next response (then reset to undefined). */
  cutAfter?: number;
  /** Send this many body bytes, then nothing more (the connection stays open). */
  stallAfter?: number;
  /** Wait this long before answering: a slow host, whose download is still running a moment after it starts. */
  delayMs?: number;
}

export interface ModelServer {
  url: string;
  options: ModelServerOptions;
  /** The Range header of each request (undefined when none). */
  ranges: Array<string | undefined>;
  bytesSent: number;
  close(): Promise<void>;
}

export async function startModelServer(body: Buffer, options: ModelServerOptions = {}): Promise<ModelServer> {
  const state: ModelServer = { url: "", options, ranges: [], bytesSent: 0, close: async () => {} };
  const server = createServer((request, response) => {
    if (state.options.delayMs) setTimeout(() => answer(request, response), state.options.delayMs);
    else answer(request, response);
  });
  const answer = (request: IncomingMessage, response: ServerResponse) => {
    const range = request.headers.range;
    state.ranges.push(range);
    if (request.url?.includes("missing")) {
      response.writeHead(404).end();
      return;
    }
    let start = 0;
    const match = range?.match(/^bytes=(\d+)-$/);
    if (match && state.options.ranges !== false) {
      start = Number(match[1]);
      if (start >= body.length) {
        response.writeHead(416, { "content-range": `bytes */${body.length}` }).end();
        return;
      }
      response.writeHead(206, {
        "content-length": body.length - start,
        "content-range": `bytes ${start}-${body.length - 1}/${body.length}`,
        "accept-ranges": "bytes",
      });
    } else {
      response.writeHead(200, { "content-length": body.length, "accept-ranges": "none" });
    }
    const cut = state.options.cutAfter;
    state.options.cutAfter = undefined;
    const limit = Math.min(body.length - start, cut ?? state.options.stallAfter ?? Number.POSITIVE_INFINITY);
    const slice = body.subarray(start, start + limit);
    state.bytesSent += slice.length;
    response.write(slice, () => {
      if (cut !== undefined) response.socket?.destroy();
      else if (state.options.stallAfter === undefined) response.end();
    });
  };
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}
