import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api as apiCall, startDaemon, type TestDaemon, tempDataDir, until } from "../helpers/daemon.ts";
import { type ScriptedServer, startOpenAiServer } from "../llm/servers/openaiServer.ts";

// Learning never makes a person wait, through a real daemon: the model is the scripted OpenAI-protocol server
// declared with `parallel: 1`, so the daemon treats it as a local model with one slot (like the embedded one).
// A slow memory extraction is in flight when someone sends a message: their turn is served at once, the
// extraction is preempted, retried once the model is free, and the memory is still learned.

let server: ScriptedServer;
let daemon: TestDaemon;

// biome-ignore lint/suspicious/noExplicitAny: tests read response bodies loosely
async function api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await apiCall(daemon, method, path, body);
  return { status: response.status, body: response.json() };
}

const modelOf = (r: { body: unknown }) => (r.body as { model?: string } | undefined)?.model;
const chatRequests = () => server.requests.filter((r) => r.path.endsWith("/chat/completions"));
const ALICE = JSON.stringify({
  memories: [{ kind: "person", subject: "Alice", content: "Alice is the user's sister; she lives in Lyon." }],
});

beforeAll(async () => {
  server = await startOpenAiServer();
  const dataDir = tempDataDir("assistant-learning-order-");
  writeFileSync(
    join(dataDir, "llm_router.yaml"),
    [
      "providers:",
      "  lowbit_server:",
      `    base_url: ${server.url}/v1`,
      "    parallel: 1",
      "task_types:",
      "  conversation:",
      "    primary: {provider: lowbit_server, model: chat-model}",
      "  system:",
      "    primary: {provider: lowbit_server, model: system-model}",
      "",
    ].join("\n"),
  );
  daemon = await startDaemon(
    {
      ASSISTANT_MEMORY_LEARN_IDLE_SECS: "0.1",
      ASSISTANT_MEMORY_EMBEDDINGS: "off",
      ASSISTANT_EMBEDDED_MODEL_PATH: join(dataDir, "no-such-model.gguf"),
    },
    dataDir,
  );
}, 30_000);

afterAll(async () => {
  await daemon?.stop();
  await server?.close();
});

describe("learning off the critical path", () => {
  it("a user turn is served before background extraction, which is retried and still learns", async () => {
    // In arrival order: the first reply, a slow extraction (40 pieces x 50 ms = 2 s), the second reply, the
    // extraction's retry.
    server.enqueue(
      { kind: "reply", text: "Noted." },
      { kind: "reply", text: [...Array(39).fill(" "), ALICE], chunkDelayMs: 50 },
      { kind: "reply", text: "It is noon." },
      { kind: "reply", text: ALICE },
    );
    const first = await api("POST", "/api/message", { message: "My sister Alice lives in Lyon.", wait: true });
    expect(first.body.reply).toBe("Noted.");
    // The session went quiet: the extraction starts and streams slowly.
    await until(
      () => Promise.resolve(chatRequests().length),
      (n) => n === 2,
    );
    expect(modelOf(chatRequests()[1]!)).toBe("system-model");

    const startedAt = performance.now();
    const second = await api("POST", "/api/message", { message: "what time is it?", wait: true });
    const secondMs = performance.now() - startedAt;
    expect(second.body.reply).toBe("It is noon.");
    // Served at once, not after the 2 s extraction.
    expect(secondMs).toBeLessThan(1500);

    const overview = await until(
      () => api("GET", "/api/memory/second-brain/overview"),
      (r) => r.body.total === 1,
    );
    expect(overview.body.recent[0]).toMatchObject({ kind: "person", subject: "Alice", origin: "learning" });
    // chat, extraction (preempted), chat, extraction again; "what time is it?" had nothing to learn: no call.
    await new Promise((r) => setTimeout(r, 300));
    expect(chatRequests().map(modelOf)).toEqual(["chat-model", "system-model", "chat-model", "system-model"]);
  });
});
