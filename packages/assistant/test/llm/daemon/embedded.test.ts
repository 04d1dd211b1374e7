import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tinyGgufBytes } from "../../fixtures/tinyGguf.ts";
import { api as apiCall, startDaemon, type TestDaemon, tempDataDir, until } from "../../helpers/daemon.ts";
import { type ModelServer, startModelServer } from "../embedded/modelServer.ts";

// The embedded default end to end, in a real daemon with no router file: the first chat falls through to core
// and starts the download; POST/GET /api/router/embedded/download show it; once verified, llama.cpp answers.

const model = tinyGgufBytes({ seed: 7 });
let host: ModelServer;
let daemon: TestDaemon;
let dataDir: string;

beforeAll(async () => {
  host = await startModelServer(model, { delayMs: 1_500 }); // the first chat sees the download running
  dataDir = tempDataDir();
  daemon = await startDaemon(
    {
      ASSISTANT_EMBEDDED_MODEL_URL: `${host.url}/tiny.gguf`,
      ASSISTANT_EMBEDDED_MODEL_SHA256: createHash("sha256").update(model).digest("hex"),
      ASSISTANT_EMBEDDED_MODEL_SIZE: String(model.length),
      ASSISTANT_EMBEDDED_THREADS: "1",
      ASSISTANT_EMBEDDED_CONTEXT: "8192",
      ASSISTANT_MAX_RESPONSE_TOKENS: "12",
    },
    dataDir,
  );
});
afterAll(async () => {
  await daemon.stop();
  await host.close();
});

const api = (method: string, path: string, body?: unknown) => apiCall(daemon, method, path, body);

describe("the embedded model in the daemon", () => {
  it("while the model is missing, core answers honestly and the download starts", async () => {
    const reply = (await api("POST", "/api/message", { message: "hello", wait: true })).json();
    expect(reply.provider).toBe("assistant_core");
    expect(reply.reply.toLowerCase()).toContain("no language model");
    const progress = await until(
      async () => (await api("GET", "/api/router/embedded/download")).json(),
      (p) => p.status === "completed" || p.status === "failed",
    );
    expect(progress).toMatchObject({
      status: "completed",
      model_id: "qwen3_0_6b",
      bytes_done: model.length,
      percent: 100,
    });
    expect(existsSync(join(dataDir, "models", "qwen3_0_6b.gguf"))).toBe(true);
  });

  it("a POST after the download is a no-op that reports completion", async () => {
    const started = await api("POST", "/api/router/embedded/download");
    expect(started.status).toBe(202);
    const done = await until(
      async () => (await api("GET", "/api/router/embedded/download")).json(),
      (p) => p.status === "completed" || p.status === "failed",
    );
    expect(done.status).toBe("completed");
  });

  it("then llama.cpp answers through the router, streamed, and /embedded reload unloads it", async () => {
    const res = await api("POST", "/api/message", { message: "say something", stream: true });
    const events = res.body.split("\n\n").filter((b) => b.startsWith("event:"));
    const done = events.find((e) => e.startsWith("event: done"))!;
    const data = JSON.parse(done.slice(done.indexOf("data:") + 5));
    expect(data.provider).toBe("assistant_embedded");
    expect(data.usage.output).toBeGreaterThan(0);
    expect(data.usage.output).toBeLessThanOrEqual(12);
    expect(events.some((e) => e.startsWith("event: token"))).toBe(true);

    const state = (await api("GET", "/api/router/embedded")).json();
    expect(state).toMatchObject({ status: "loaded", model_id: "qwen3_0_6b", threads: 1, context_size: 8192 });
    const slash = (await api("POST", "/api/message", { message: "/embedded reload", wait: true })).json();
    expect(slash.reply).toContain("unloaded");
    expect((await api("GET", "/api/router/embedded")).json().status).toBe("unloaded");
    const again = (await api("POST", "/api/message", { message: "once more", wait: true })).json();
    expect(again.provider).toBe("assistant_embedded");
    expect((await api("GET", "/api/router/embedded")).json().status).toBe("loaded");
  });

  it("calibration measures tokens/s and stores the choice", async () => {
    const res = await api("POST", "/api/router/embedded/calibrate");
    expect(res.status).toBe(200);
    const calibration = res.json();
    expect(calibration.tokens_per_second).toBeGreaterThan(0);
    expect(calibration.automatic).toBe(false);
    expect(existsSync(join(dataDir, "models", "embedded_calibration.json"))).toBe(true);
    const state = (await api("GET", "/api/router/embedded")).json();
    expect(state.calibration.tokens_per_second).toBe(calibration.tokens_per_second);
    expect(state).toMatchObject({ threads: 1, threads_source: "setting" }); // ASSISTANT_EMBEDDED_THREADS wins
  });

  it("router metrics count the embedded calls", async () => {
    const metrics = (await api("GET", "/api/router/metrics")).json();
    const embedded = metrics.models.find((m: { provider: string }) => m.provider === "assistant_embedded");
    expect(embedded.calls).toBeGreaterThanOrEqual(2);
    expect(embedded.tokens_out).toBeGreaterThan(0);
  });
});
