import { writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api as apiCall, startDaemon, type TestDaemon, tempDataDir, until } from "../../helpers/daemon.ts";
import { runCli } from "../../setup/helpers.ts";
import { type ScriptedServer, startOpenAiServer } from "../servers/openaiServer.ts";

// The embedded model on a machine that cannot download it (docs/models.md#when-a-model-fails), in a real daemon: the
// route the person chose (their server first, the embedded model behind it) never downloads while their server
// answers; once it stops, the chat names why the embedded model is not there (never "downloading"), and the next
// messages do not start a new download until the backoff ends; asking explicitly tries again at once.

let mirror: Server;
let mirrorUrl: string;
let mirrorRequests = 0;
let server: ScriptedServer;
let daemon: TestDaemon;
let dataDir: string;

beforeAll(async () => {
  // A mirror that is there but cannot serve the file (a proxy without network answers like this).
  mirror = createServer((_request, response) => {
    mirrorRequests++;
    response.writeHead(503).end();
  });
  await new Promise<void>((resolve) => mirror.listen(0, "127.0.0.1", resolve));
  mirrorUrl = `http://127.0.0.1:${(mirror.address() as AddressInfo).port}/qwen3.gguf`;
  server = await startOpenAiServer({ models: [{ id: "fake-7b", object: "model" }] });
  dataDir = tempDataDir();
  writeFileSync(
    join(dataDir, "llm_router.yaml"),
    `providers:
  lowbit_server:
    base_url: ${server.url}/v1
task_types:
  conversation:
    primary: {provider: lowbit_server, model: fake-7b}
    fallback:
      - {provider: assistant_embedded, model: default}
      - {provider: assistant_core, model: core}
`,
  );
  daemon = await startDaemon({ ASSISTANT_MEMORY_LEARNING: "0", ASSISTANT_EMBEDDED_MODEL_URL: mirrorUrl }, dataDir);
});
afterAll(async () => {
  await daemon?.stop();
  await server?.close().catch(() => {});
  await new Promise((resolve) => mirror?.close(resolve));
});

const chat = (message: string) =>
  runCli(["chat", "--task-type", "conversation", message], { env: { ASSISTANT_DATA_DIR: dataDir } });
const api = (method: string, path: string) => apiCall(daemon, method, path);

describe("the embedded model without a network", () => {
  it("is never downloaded while the primary the person chose answers", async () => {
    for (const text of ["one", "two"]) {
      server.enqueue({ kind: "reply", text });
      const res = await chat(`say ${text}`);
      expect(res.stdout).toBe(`${text}\n`);
    }
    expect(mirrorRequests).toBe(0);
    expect((await api("GET", "/api/router/embedded/download")).json().status).toBe("idle");
  });

  it("once the primary stops, the answer says why the embedded model is missing, never that it is downloading", async () => {
    await server.close();
    const res = await chat("hello");
    expect(res.code).toBe(1);
    expect(mirrorRequests).toBe(1);
    const why = `the model file could not be downloaded: ${mirrorUrl} answered HTTP 503`;
    expect(res.stderr).toContain(`; assistant_embedded/default failed: ${why}`);
    expect(res.stderr).toMatch(
      /next try in 1 min \(offline: ASSISTANT_EMBEDDED_MODEL_PATH .*ASSISTANT_EMBEDDED_MODEL_URL/,
    );
    expect(res.stdout).toContain(`The embedded model (qwen3_0_6b) is unavailable: ${why}`);
    expect(res.stdout + res.stderr).not.toContain("downloading");
    const state = (await api("GET", "/api/router/embedded")).json();
    expect(state).toMatchObject({ status: "failed", error: expect.stringContaining(why) });
  });

  it("the next messages do not start another download during the backoff", async () => {
    for (const text of ["again", "and again"]) {
      const res = await chat(text);
      expect(res.stderr).toContain("assistant_embedded/default failed: the model file could not be downloaded");
    }
    expect(mirrorRequests).toBe(1);
  });

  it("an explicit download request tries again at once", async () => {
    const started = await api("POST", "/api/router/embedded/download");
    expect(started.status).toBe(202);
    const done = await until(
      async () => (await api("GET", "/api/router/embedded/download")).json(),
      (p) => p.status === "failed" || p.status === "completed",
    );
    expect(done).toMatchObject({ status: "failed", error: expect.stringContaining("HTTP 503") });
    expect(mirrorRequests).toBe(2);
  });
});
