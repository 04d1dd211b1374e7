import { createServer as createHttpServer, type Server } from "node:http";
import { createServer as createNetServer, type Server as NetServer, type Socket } from "node:net";
import { gzipSync } from "node:zlib";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { httpFetch } from "../../../src/llm/providers/httpFetch.ts";
import { type ScriptedServer, startOpenAiServer } from "../servers/openaiServer.ts";
import { closedPort } from "./helpers.ts";

// The fetch the local providers use (node:http over a keep-alive agent), against real loopback servers: what the
// AI SDK and the router rely on from fetch (status, headers, streamed body, abort reasons, "fetch failed" with
// the system code, "terminated" on a cut), one connection reused across calls, and global fetch for the rest.

let scripted: ScriptedServer;
beforeAll(async () => {
  scripted = await startOpenAiServer();
});
afterAll(() => scripted.close());
afterEach(() => {
  vi.restoreAllMocks();
});

const chat = (stream = true) => JSON.stringify({ model: "m", stream, messages: [{ role: "user", content: "hi" }] });
const post = (url: string, init: RequestInit = {}) =>
  httpFetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer k", "x-absent": undefined } as never,
    body: chat(),
    ...init,
  });

async function listen<T extends Server | NetServer>(server: T): Promise<{ server: T; url: string }> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return { server, url: `http://127.0.0.1:${port}` };
}

describe("httpFetch", () => {
  it("sends the request as given and streams the answer, with status and headers", async () => {
    const res = await post(`${scripted.url}/v1/chat/completions`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const text = await res.text();
    expect(text).toContain("Hello");
    expect(text.trim().endsWith("data: [DONE]")).toBe(true);
    const sent = scripted.requests.at(-1)!;
    expect(sent.method).toBe("POST");
    expect(sent.headers.authorization).toBe("Bearer k");
    expect(sent.headers["x-absent"]).toBeUndefined();
    expect(sent.body).toEqual(JSON.parse(chat()));

    scripted.enqueue({ kind: "status", status: 429, headers: { "retry-after": "3" } });
    const limited = await post(`${scripted.url}/v1/chat/completions`);
    expect([limited.status, limited.ok, limited.headers.get("retry-after")]).toEqual([429, false, "3"]);
    expect(await limited.json()).toMatchObject({ error: { message: "scripted HTTP 429" } });
  });

  it("reuses one kept-alive connection for calls one after the other", async () => {
    const sockets = new Set<Socket>();
    const { server, url } = await listen(
      createHttpServer((req, res) => {
        sockets.add(req.socket);
        req.resume().on("end", () => res.end("ok"));
      }),
    );
    for (let i = 0; i < 5; i++) expect(await (await post(url)).text()).toBe("ok");
    expect(sockets.size).toBe(1);
    server.closeAllConnections();
    server.close();
  });

  it("sends a call again on a new connection when the server reset the kept-alive one it was sent on", async () => {
    // A raw server: the first connection answers one request, then resets on the next (a server closing an idle
    // connection as the request arrives); later connections answer normally.
    let connections = 0;
    const { server, url } = await listen(
      createNetServer((socket) => {
        const index = ++connections;
        let requests = 0;
        socket.on("data", () => {
          if (index === 1 && ++requests === 2) return socket.resetAndDestroy();
          socket.write("HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: keep-alive\r\n\r\nok");
        });
      }),
    );
    expect(await (await post(url)).text()).toBe("ok");
    expect(await (await post(url)).text()).toBe("ok");
    expect(connections).toBe(2);
    server.close();
  });

  it("fails like fetch when nothing answers: TypeError 'fetch failed' with the system code as its cause", async () => {
    const error = await post(`http://127.0.0.1:${await closedPort()}/v1/chat/completions`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe("fetch failed");
    expect(((error as Error).cause as NodeJS.ErrnoException).code).toBe("ECONNREFUSED");
  });

  it("rejects with the signal's reason when aborted before the answer, and errors the body when aborted during it", async () => {
    scripted.enqueue({ kind: "hang" });
    const before = new AbortController();
    const pending = post(`${scripted.url}/v1/chat/completions`, { signal: before.signal });
    setTimeout(() => before.abort(new Error("first chunk timeout")), 50);
    await expect(pending).rejects.toThrow("first chunk timeout");

    scripted.enqueue({ kind: "stall", afterChunks: 1 });
    const during = new AbortController();
    const res = await post(`${scripted.url}/v1/chat/completions`, { signal: during.signal });
    const reader = res.body!.getReader();
    await reader.read(); // the first chunk arrived
    during.abort(new Error("idle timeout"));
    await expect(reader.read()).rejects.toThrow("idle timeout");

    const already = AbortSignal.abort(new Error("cancelled by the caller"));
    await expect(post(`${scripted.url}/v1/chat/completions`, { signal: already })).rejects.toThrow(
      "cancelled by the caller",
    );
  });

  it("errors the body with TypeError 'terminated' when the connection is cut mid-answer", async () => {
    scripted.enqueue({ kind: "cut", afterChunks: 2 });
    const res = await post(`${scripted.url}/v1/chat/completions`);
    const error = await res.text().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe("terminated");
    // No system code in the chain: a cut reads as a server failure (retried), not as an unreachable server.
    expect(((error as Error).cause as NodeJS.ErrnoException).code).toBeUndefined();
  });

  it("decodes a compressed answer", async () => {
    const { server, url } = await listen(
      createHttpServer((req, res) => {
        req.resume();
        res.writeHead(200, { "content-encoding": "gzip", "content-type": "application/json" });
        res.end(gzipSync(JSON.stringify({ ok: true })));
      }),
    );
    expect(await (await post(url)).json()).toEqual({ ok: true });
    server.close();
  });

  it("leaves https, Request objects and non-string bodies to global fetch", async () => {
    const global = vi.spyOn(globalThis, "fetch").mockResolvedValue(new Response("from global fetch"));
    await httpFetch("https://api.example.test/v1/chat/completions", { method: "POST", body: "{}" });
    await httpFetch(new Request(`${scripted.url}/health`));
    await httpFetch(`${scripted.url}/v1/embeddings`, { method: "POST", body: new Uint8Array([123, 125]) });
    expect(global).toHaveBeenCalledTimes(3);
    const before = scripted.requests.length;
    await httpFetch(`${scripted.url}/health`);
    expect(global).toHaveBeenCalledTimes(3);
    expect(scripted.requests.length).toBe(before + 1);
  });
});
