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
  it("finds Ollama and an OpenAI-compatible server, and reports refused and silent candidates unreachable within the timeout", async () => {
    const refusedPort = await closedPort();
    const silentUrl = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
    const started = performance.now();
    const found = await discoverLocalServers(
      {},
      {
        timeoutMs: 300,
        candidates: [
          { provider: "local_server", base_url: ollama.url, source: "--url" },
          { provider: "lowbit_server", base_url: llama.url, source: "--url" },
          { provider: "local_server", base_url: `http://127.0.0.1:${refusedPort}`, source: "default port" },
          { provider: "lowbit_server", base_url: silentUrl, source: "default port" },
        ],
      },
    );
    // In parallel: the whole probe costs about one timeout, not one per candidate.
    expect(performance.now() - started).toBeLessThan(1000);

    expect(found[0]).toEqual({
      provider: "local_server",
      base_url: ollama.url,
      source: "--url",
      reachable: true,
      version: "0.12.3",
      models: ["llama3.2:3b", "qwen3:0.6b"],
      use: `assistant config provider set-local-server --url ${ollama.url} --category conversation --model llama3.2:3b`,
    });
    expect(found[1]).toEqual({
      provider: "lowbit_server",
      base_url: `${llama.url}/v1`,
      source: "--url",
      reachable: true,
      models: ["tiny.gguf"],
      use: `assistant config provider set-lowbit-server --url ${llama.url}/v1 --category conversation --model tiny.gguf`,
    });
    expect(found[2]).toEqual({
      provider: "local_server",
      base_url: `http://127.0.0.1:${refusedPort}`,
      source: "default port",
      reachable: false,
      models: [],
      error: "ECONNREFUSED",
    });
    expect(found[3]).toEqual({
      provider: "lowbit_server",
      base_url: `${silentUrl}/v1`,
      source: "default port",
      reachable: false,
      models: [],
      error: "no answer within 300 ms",
    });
  });

  it("names what answers, not what the port suggests: an OpenAI server on the Ollama port is lowbit_server", async () => {
    const [server] = await discoverLocalServers(
      {},
      { candidates: [{ provider: "local_server", base_url: llama.url, source: "default port" }] },
    );
    expect(server).toMatchObject({ provider: "lowbit_server", base_url: `${llama.url}/v1`, reachable: true });
    expect(server!.use).toContain("set-lowbit-server");
    const [other] = await discoverLocalServers(
      {},
      { candidates: [{ provider: "lowbit_server", base_url: `${ollama.url}/v1`, source: "llm_router.yaml" }] },
    );
    expect(other).toMatchObject({ provider: "local_server", base_url: ollama.url, reachable: true });
    expect(other!.use).toContain("set-local-server");
  });

  it("counts a server whose model list answers as reachable though a health path answers 404", async () => {
    llama.enqueue({ kind: "status", status: 404, path: "/health" });
    ollama.enqueue({ kind: "status", status: 404, path: "/api/version" });
    const found = await discoverLocalServers(
      {},
      {
        candidates: [
          { provider: "lowbit_server", base_url: `${llama.url}/v1`, source: "--url" },
          { provider: "local_server", base_url: ollama.url, source: "--url" },
        ],
      },
    );
    expect(found.map((s) => [s.provider, s.reachable, s.models.length])).toEqual([
      ["lowbit_server", true, 1],
      ["local_server", true, 2],
    ]);
    expect(found[1]!.version).toBeUndefined();
  });

  it("counts a llama-server that answers only /health (its model still loading) as reachable", async () => {
    llama.enqueue({ kind: "status", status: 503, path: "/v1/models" });
    const [server] = await discoverLocalServers(
      {},
      { candidates: [{ provider: "lowbit_server", base_url: `${llama.url}/v1`, source: "--url" }] },
    );
    expect(server).toEqual({
      provider: "lowbit_server",
      base_url: `${llama.url}/v1`,
      source: "--url",
      reachable: true,
      models: [],
      use: `assistant config provider set-lowbit-server --url ${llama.url}/v1`,
    });
  });

  it("says an HTTP server that speaks neither protocol is not a model server", async () => {
    const web = await startOllamaServer();
    web.enqueue({ kind: "status", status: 404, path: "/api/tags" });
    try {
      const [server] = await discoverLocalServers(
        {},
        { candidates: [{ provider: "local_server", base_url: web.url, source: "default port" }] },
      );
      expect(server).toMatchObject({ reachable: false, models: [] });
      expect(server!.error).toBe(
        `answers HTTP but is not a model server (GET ${web.url}/api/tags answered HTTP 404; GET ${web.url}/v1/models answered HTTP 404)`,
      );
      expect(server!.use).toBeUndefined();
    } finally {
      await web.close();
    }
  });

  it("asks URLs given first, then the router file's, LOCAL_SERVER_HOST and the usual ports, without duplicates", () => {
    const usual = [
      { provider: "local_server", base_url: "http://127.0.0.1:11434", source: "default port" },
      { provider: "lowbit_server", base_url: "http://127.0.0.1:8080/v1", source: "default port" },
      { provider: "lowbit_server", base_url: "http://127.0.0.1:1234/v1", source: "default port" },
      { provider: "lowbit_server", base_url: "http://127.0.0.1:8000/v1", source: "default port" },
    ];
    expect(defaultCandidates({})).toEqual(usual);
    const config = {
      providers: {
        local_server: { base_url: "http://gpu-box:11434" },
        lowbit_server: { base_url: "http://127.0.0.1:1234/v1" },
      },
    };
    expect(defaultCandidates({ LOCAL_SERVER_HOST: "http://nas:11434" }, config, ["http://10.0.0.7:8000"])).toEqual([
      { provider: "lowbit_server", base_url: "http://10.0.0.7:8000", source: "--url" },
      { provider: "local_server", base_url: "http://gpu-box:11434", source: "llm_router.yaml" },
      { provider: "lowbit_server", base_url: "http://127.0.0.1:1234/v1", source: "llm_router.yaml" },
      { provider: "local_server", base_url: "http://nas:11434", source: "LOCAL_SERVER_HOST" },
      usual[0],
      usual[1],
      usual[3],
    ]);
    expect(defaultCandidates({ LOCAL_SERVER_HOST: "http://127.0.0.1:11434/" })).toHaveLength(4);
  });
});
