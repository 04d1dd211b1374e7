import { createServer, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultCandidates, discoverLocalServers } from "../../../src/llm/discover.ts";
import { startOllamaServer } from "../servers/ollamaServer.ts";
import { type ScriptedServer, startOpenAiServer } from "../servers/openaiServer.ts";
import { closedPort } from "./helpers.ts";

let ollama: ScriptedServer;
let llama: ScriptedServer;
/** Accepts connections and never answers: a server that is there but stuck. */
let silent: Server;
const sockets: Socket[] = [];

beforeAll(async () => {
  [ollama, llama] = await Promise.all([
    startOllamaServer({ version: "0.12.3", models: [{ name: "llama3.2:3b" }, { name: "qwen3:0.6b" }] }),
    startOpenAiServer({ models: [{ id: "tiny.gguf", object: "model" }] }),
  ]);
  silent = createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await Promise.all([ollama.close(), llama.close(), new Promise((resolve) => silent.close(resolve))]);
});

describe("discoverLocalServers", () => {
  it("finds Ollama and llama-server, and reports refused and silent candidates unreachable within the timeout", async () => {
    const refusedPort = await closedPort();
    const silentUrl = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
    const started = performance.now();
    const found = await discoverLocalServers(
      {},
      {
        timeoutMs: 300,
        candidates: [
          { provider: "local_server", base_url: ollama.url },
          { provider: "lowbit_server", base_url: llama.url },
          { provider: "local_server", base_url: `http://127.0.0.1:${refusedPort}` },
          { provider: "lowbit_server", base_url: silentUrl },
        ],
      },
    );
    // In parallel: the whole probe costs about one timeout, not one per candidate.
    expect(performance.now() - started).toBeLessThan(1000);

    expect(found[0]).toEqual({
      provider: "local_server",
      base_url: ollama.url,
      reachable: true,
      version: "0.12.3",
      models: ["llama3.2:3b", "qwen3:0.6b"],
    });
    expect(found[1]).toEqual({
      provider: "lowbit_server",
      base_url: `${llama.url}/v1`,
      reachable: true,
      models: ["tiny.gguf"],
    });
    expect(found[2]).toMatchObject({ provider: "local_server", reachable: false, models: [] });
    expect(found[2]!.error).toContain("cannot reach");
    expect(found[3]).toEqual({
      provider: "lowbit_server",
      base_url: `${silentUrl}/v1`,
      reachable: false,
      models: [],
      error: "no answer within 300 ms",
    });
    expect(ollama.requests.map((r) => r.path).sort()).toEqual(["/api/tags", "/api/version"]);
  });

  it("counts a llama-server that answers only /health as reachable", async () => {
    llama.enqueue({ kind: "status", status: 503, path: "/v1/models" });
    const [server] = await discoverLocalServers(
      {},
      { candidates: [{ provider: "lowbit_server", base_url: `${llama.url}/v1` }] },
    );
    expect(server).toEqual({ provider: "lowbit_server", base_url: `${llama.url}/v1`, reachable: true, models: [] });
  });

  it("rejects a server on the Ollama port that is not Ollama", async () => {
    const [server] = await discoverLocalServers(
      {},
      { candidates: [{ provider: "local_server", base_url: llama.url }] },
    );
    expect(server).toMatchObject({ reachable: false, models: [] });
    expect(server!.error).toContain("answered HTTP 404");
  });

  it("probes LOCAL_SERVER_HOST first, then the default ports, without duplicates", () => {
    expect(defaultCandidates({})).toEqual([
      { provider: "local_server", base_url: "http://127.0.0.1:11434" },
      { provider: "lowbit_server", base_url: "http://127.0.0.1:8080" },
    ]);
    expect(defaultCandidates({ LOCAL_SERVER_HOST: "http://gpu-box:11434" })).toEqual([
      { provider: "local_server", base_url: "http://gpu-box:11434" },
      { provider: "local_server", base_url: "http://127.0.0.1:11434" },
      { provider: "lowbit_server", base_url: "http://127.0.0.1:8080" },
    ]);
    expect(defaultCandidates({ LOCAL_SERVER_HOST: "http://127.0.0.1:11434/" })).toHaveLength(2);
  });
});
