import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { LlmRouterInput } from "../../../src/config/schemas/llmRouter.ts";
import { backgroundCalmMs, slotPolicyFor } from "../../../src/llm/modelSlots.ts";
import type { LlmPriority } from "../../../src/llm/types.ts";
import { type ScriptedServer, startOpenAiServer } from "../servers/openaiServer.ts";
import { testRouter } from "./helpers.ts";

// Who the model serves first: the real router over the scripted OpenAI-protocol server, which answers slowly
// (a word every 25 ms) so calls overlap. With `parallel: 1` the server stands for a local model with one slot
// (like the embedded model); without it, for a local server that serves every call at once.

let server: ScriptedServer;
const SLOW = { kind: "reply" as const, text: "one two three four five six seven eight", chunkDelayMs: 25 };
const ANSWER = "one two three four five six seven eight";

beforeAll(async () => {
  server = await startOpenAiServer();
  server.setDefault(SLOW);
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  server.requests.length = 0;
});

function localRouter(parallel?: number) {
  const file: LlmRouterInput = {
    providers: { lowbit_server: { base_url: `${server.url}/v1`, ...(parallel ? { parallel } : {}) } },
    task_types: {
      conversation: { primary: { provider: "lowbit_server", model: "chat-model" } },
      system: { primary: { provider: "lowbit_server", model: "chat-model" } },
    },
  };
  return testRouter(file).router;
}

/** The label each chat request carried, in the order the server received them. */
const served = () =>
  server.requests
    .filter((r) => r.path.endsWith("/chat/completions"))
    .map((r) => JSON.stringify(r.body).match(/call:(\w+)/)![1]!);

function call(router: ReturnType<typeof localRouter>, label: string, priority: LlmPriority, finished: string[]) {
  return router
    .complete({
      taskType: priority === "background" ? "system" : "conversation",
      prompt: [{ role: "user", content: [{ type: "text", text: `call:${label}` }] }],
      priority,
    })
    .then((result) => {
      finished.push(label);
      return result;
    });
}

const tick = (ms = 30) => new Promise((r) => setTimeout(r, ms));

describe("model slots: one local slot", () => {
  it("a user turn preempts background work in flight, which is retried afterwards and still answers", async () => {
    const router = localRouter(1);
    const finished: string[] = [];
    const background = call(router, "extraction", "background", finished);
    // The extraction is streaming once the server has its request (the first call of a router also loads the
    // provider module, slow on a loaded machine); its answer takes 200 ms more.
    while (!served().includes("extraction")) await tick(5);
    await tick(30);
    const startedAt = performance.now();
    const user = await call(router, "user", "user", finished);
    const userMs = performance.now() - startedAt;
    const userDone = performance.now();
    const extraction = await background;
    // The retry waited for the model to be calm for a while (doubled after the preemption: 1 s), then streamed.
    expect(performance.now() - userDone).toBeGreaterThanOrEqual(backgroundCalmMs(1));

    expect(user.text).toBe(ANSWER);
    expect(extraction.text).toBe(ANSWER); // the retry's answer only: the preempted part was discarded
    expect(finished).toEqual(["user", "extraction"]);
    expect(served()).toEqual(["extraction", "user", "extraction"]);
    expect(extraction.calls).toBe(2);
    // The user's call did not wait for the extraction to finish (8 words x 25 ms = 200 ms each).
    expect(userMs).toBeLessThan(380);
  });

  it("waiting calls are served by priority (user, then tool, then background), in arrival order within one", async () => {
    const router = localRouter(1);
    const finished: string[] = [];
    const first = call(router, "first", "user", finished);
    await tick();
    const calls = [
      call(router, "tool1", "tool", finished),
      call(router, "background1", "background", finished),
      call(router, "user1", "user", finished),
      call(router, "tool2", "tool", finished),
      call(router, "user2", "user", finished),
    ];
    await Promise.all([first, ...calls.filter((_, i) => i !== 1)]); // every foreground call
    const foregroundDone = performance.now();
    await calls[1];
    expect(performance.now() - foregroundDone).toBeGreaterThanOrEqual(backgroundCalmMs(0));
    expect(finished).toEqual(["first", "user1", "user2", "tool1", "tool2", "background1"]);
    // Background started only once nothing else was running or waiting: it was never preempted.
    expect(served()).toEqual(["first", "user1", "user2", "tool1", "tool2", "background1"]);
  });

  it("background waits while a foreground call runs, and a caller's abort leaves the line", async () => {
    const router = localRouter(1);
    const finished: string[] = [];
    const user = call(router, "user", "user", finished);
    await tick();
    const controller = new AbortController();
    const abandoned = router
      .complete({
        taskType: "system",
        prompt: [{ role: "user", content: [{ type: "text", text: "call:abandoned" }] }],
        priority: "background",
        signal: controller.signal,
      })
      .catch((error: unknown) => error);
    const background = call(router, "background", "background", finished);
    controller.abort(new Error("shutting down"));
    expect(((await abandoned) as Error).message).toBe("shutting down");
    await Promise.all([user, background]);
    expect(served()).toEqual(["user", "background"]);
  });
});

describe("model slots: a local server without a limit", () => {
  it("serves every foreground call at once; background waits until none runs", async () => {
    const router = localRouter();
    const finished: string[] = [];
    // Slower answers here (a word every 150 ms, over a second each) leave a loaded machine time to send all 20.
    server.setDefault({ ...SLOW, chunkDelayMs: 150 });
    try {
      const users = Array.from({ length: 20 }, (_, i) => call(router, `user${i}`, "user", finished));
      const background = call(router, "background", "background", finished);
      while (served().filter((l) => l.startsWith("user")).length < 20) await tick(10);
      // All 20 reached the server before any answer was complete: nothing was serialized.
      expect(finished).toEqual([]);
      expect(served()).not.toContain("background");
      await Promise.all([...users, background]);
      expect(finished.at(-1)).toBe("background");
    } finally {
      server.setDefault(SLOW);
    }
  });
});

describe("model slots: policies", () => {
  it("one slot for the embedded model, `parallel` slots for a local server, none to manage for cloud or core", () => {
    const config = (providers: Record<string, unknown>) =>
      ({ providers, task_types: {}, global: {} }) as unknown as Parameters<typeof slotPolicyFor>[1];
    expect(slotPolicyFor({ id: "assistant_embedded", local: true }, config({}))).toEqual({
      capacity: 1,
      yieldsToForeground: true,
    });
    expect(slotPolicyFor({ id: "local_server", local: true }, config({ local_server: { parallel: 2 } }))).toEqual({
      capacity: 2,
      yieldsToForeground: true,
    });
    expect(slotPolicyFor({ id: "lowbit_server", local: true }, config({}))).toEqual({
      capacity: Number.POSITIVE_INFINITY,
      yieldsToForeground: true,
    });
    expect(slotPolicyFor({ id: "cloud_a", local: false }, config({}))).toBeNull();
    expect(slotPolicyFor({ id: "cloud_a", local: false }, config({ cloud_a: { parallel: 4 } }))).toEqual({
      capacity: 4,
      yieldsToForeground: false,
    });
    expect(slotPolicyFor({ id: "assistant_core", local: true }, config({}))).toBeNull();
  });
});
