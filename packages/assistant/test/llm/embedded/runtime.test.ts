import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import type { LanguageModelV4CallOptions, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { afterAll, describe, expect, it } from "vitest";
import { dataPaths } from "../../../src/config/paths.ts";
import { readSettings } from "../../../src/config/settings.ts";
import { CALIBRATION_BUDGET_MS, threadCandidates } from "../../../src/llm/embedded/calibration.ts";
import { ModelDownloader } from "../../../src/llm/embedded/download.ts";
import { toChatHistory } from "../../../src/llm/embedded/languageModel.ts";
import { createEmbeddedRuntime, ggufProblem, machineThreads } from "../../../src/llm/embedded/runtime.ts";
import { ProviderFailure } from "../../../src/llm/errors.ts";
import type { EmbeddedRuntime } from "../../../src/llm/types.ts";
import type { Logger } from "../../../src/log/logger.ts";
import { tinyGgufBytes, writeTinyGguf } from "../../fixtures/tinyGguf.ts";
import { startModelServer } from "./modelServer.ts";

// The embedded runtime against the real llama.cpp (in this vitest fork) with the tiny random-weight GGUF: the
// output is noise, so the tests check the plumbing (load, stream, usage, abort, grammar), never the content.

const root = mkdtempSync(join(tmpdir(), "assistant-embedded-"));
const modelFile = join(root, "tiny.gguf");
writeTinyGguf(modelFile, { seed: 7 });
const runtimes: EmbeddedRuntime[] = [];
afterAll(async () => {
  await Promise.all(runtimes.map((r) => r.close()));
  rmSync(root, { recursive: true, force: true });
});

function runtimeFor(env: NodeJS.ProcessEnv = {}, logger?: Logger, downloader = new ModelDownloader()) {
  const dataDir = mkdtempSync(join(root, "data-"));
  const runtime = createEmbeddedRuntime({
    settings: readSettings({
      ASSISTANT_EMBEDDED_MODEL_PATH: modelFile,
      ASSISTANT_EMBEDDED_THREADS: "1",
      ASSISTANT_EMBEDDED_CONTEXT: "512",
      ASSISTANT_EMBEDDED_GPU: "0",
      ...env,
    }),
    paths: dataPaths(dataDir),
    downloader,
    ...(logger ? { logger } : {}),
  });
  runtimes.push(runtime);
  return { runtime, dataDir };
}

function recordingLogger(): Logger & { messages: string[] } {
  const messages: string[] = [];
  const log = (message: string) => messages.push(message);
  return { messages, trace: log, debug: log, info: log, warn: log, error: log, enabled: () => true };
}

const hello: LanguageModelV4CallOptions = {
  prompt: [
    { role: "system", content: "You are a helpful assistant." },
    { role: "user", content: [{ type: "text", text: "hello world" }] },
  ],
  maxOutputTokens: 8,
  temperature: 0,
};

async function readParts(stream: ReadableStream<LanguageModelV4StreamPart>): Promise<LanguageModelV4StreamPart[]> {
  const parts: LanguageModelV4StreamPart[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return parts;
    parts.push(value);
  }
}

function finishOf(parts: LanguageModelV4StreamPart[]) {
  const finish = parts.find((p) => p.type === "finish");
  if (finish?.type !== "finish") throw new Error(`no finish part in ${JSON.stringify(parts.map((p) => p.type))}`);
  return finish;
}

describe("embedded runtime", () => {
  it("loads nothing until a call needs the model, then streams text deltas and a finish with usage", async () => {
    const { runtime } = runtimeFor();
    const model = runtime.languageModel();
    expect(model).toMatchObject({ specificationVersion: "v4", provider: "assistant_embedded", modelId: "custom" });
    expect(runtime.state()).toMatchObject({ status: "unloaded", model_id: "custom", file_present: true, threads: 1 });

    const { stream } = await model.doStream(hello);
    const parts = await readParts(stream);
    const types = parts.map((p) => p.type);
    expect(types[0]).toBe("stream-start");
    expect(types).toContain("text-start");
    expect(types.filter((t) => t === "text-delta").length).toBeGreaterThan(0);
    expect(types.indexOf("text-end")).toBeGreaterThan(types.lastIndexOf("text-delta"));
    const finish = finishOf(parts);
    expect(types.at(-1)).toBe("finish");
    expect(finish.usage.inputTokens.total).toBeGreaterThan(5);
    expect(finish.usage.outputTokens.total).toBeGreaterThan(0);
    expect(finish.usage.outputTokens.total).toBeLessThanOrEqual(8);
    expect(finish.finishReason.unified).toBe("length");

    expect(runtime.state()).toMatchObject({ status: "loaded", threads: 1, context_size: 512, gpu: false, error: null });
  });

  it("streams the whole answer in order, as llama.cpp generates it, in several deltas", async () => {
    const { runtime } = runtimeFor();
    const long = { ...hello, maxOutputTokens: 96 };
    const started = performance.now();
    const { stream } = await runtime.languageModel().doStream(long);
    const deltas: Array<{ text: string; at: number }> = [];
    const reader = stream.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (value.type === "text-delta") deltas.push({ text: value.delta, at: performance.now() - started });
    }
    // The same greedy generation straight from node-llama-cpp: the deltas (merged when they wait together)
    // add up to exactly its text.
    const lib = await import("node-llama-cpp");
    const llama = await lib.getLlama({ build: "never", gpu: false, logLevel: lib.LlamaLogLevel.error });
    const model = await llama.loadModel({ modelPath: modelFile });
    const context = await model.createContext({ contextSize: 512, threads: 1 });
    try {
      const chat = new lib.LlamaChat({ contextSequence: context.getSequence() });
      const bare = await chat.generateResponse(toChatHistory(long.prompt), { maxTokens: 96, temperature: 0 });
      expect(deltas.map((d) => d.text).join("")).toBe(bare.response);
    } finally {
      await context.dispose();
      await model.dispose();
    }
    expect(deltas.length).toBeGreaterThan(1);
    // Streamed, not held to the end: the first delta arrives before the last.
    expect(deltas[0]!.at).toBeLessThan(deltas.at(-1)!.at);
  });

  it("embeds texts for memory search: one finite vector per text, the same text the same vector", async () => {
    const { runtime } = runtimeFor();
    const vectors = await runtime.embed([
      "my sister lives in Lyon",
      "the car keys are in the drawer",
      "my sister lives in Lyon",
    ]);
    expect(vectors).toHaveLength(3);
    expect(vectors[0]!.length).toBeGreaterThan(0);
    expect(vectors.every((v) => v.length === vectors[0]!.length && v.every(Number.isFinite))).toBe(true);
    expect(vectors[2]).toEqual(vectors[0]);
    expect(vectors[1]).not.toEqual(vectors[0]);
    // Chat still works beside the embedding context.
    const { stream } = await runtime.languageModel().doStream(hello);
    expect(finishOf(await readParts(stream)).usage.outputTokens.total).toBeGreaterThan(0);
  });

  it("never starts a download to embed: a missing model file is unavailable at once", async () => {
    const { runtime } = runtimeFor({ ASSISTANT_EMBEDDED_MODEL_PATH: join(root, "absent.gguf") });
    await expect(runtime.embed(["anything"])).rejects.toThrow(/not present/);
  });

  it("answers doGenerate with the same text, and unload drops the weights until the next call", async () => {
    const logger = recordingLogger();
    const { runtime } = runtimeFor({}, logger);
    const first = await runtime.languageModel().doGenerate(hello);
    expect(first.content[0]).toMatchObject({ type: "text", text: expect.any(String) });
    expect(runtime.state().status).toBe("loaded");

    await runtime.unload();
    expect(runtime.state().status).toBe("unloaded");
    const second = await runtime.languageModel().doGenerate(hello);
    // Greedy decoding of the same prompt with the same weights: the reloaded model answers identically.
    expect(second.content).toEqual(first.content);
    expect(runtime.state().status).toBe("loaded");
    expect(logger.messages.filter((m) => m === "embedded model loaded")).toHaveLength(2);
  });

  it("loads once for concurrent first calls and serves them one after the other", async () => {
    const logger = recordingLogger();
    const { runtime } = runtimeFor({}, logger);
    const model = runtime.languageModel();
    const results = await Promise.all([1, 2, 3].map(() => model.doGenerate(hello)));
    for (const result of results) expect(result.usage.outputTokens.total).toBeGreaterThan(0);
    expect(logger.messages.filter((m) => m === "embedded model loaded")).toHaveLength(1);
  });

  it("stops generating promptly when the call is aborted, and serves the next call", async () => {
    const { runtime } = runtimeFor();
    const model = runtime.languageModel();
    const long = { ...hello, maxOutputTokens: 400 };
    await model.doGenerate(hello); // loaded first, so the timings below are generation only
    let started = performance.now();
    const full = await model.doGenerate(long);
    const fullMs = performance.now() - started;
    expect(full.finishReason.unified).toBe("length"); // the noise model never says end-of-text: 400 tokens

    const controller = new AbortController();
    const reason = new Error("user stopped");
    const { stream } = await model.doStream({ ...long, abortSignal: controller.signal });
    const reader = stream.getReader();
    const first = await reader.read();
    expect(first.value?.type).toBe("stream-start");
    while ((await reader.read()).value?.type !== "text-delta") {}
    started = performance.now();
    controller.abort(reason);
    const drain = async () => {
      while (!(await reader.read()).done) {}
    };
    await expect(drain()).rejects.toBe(reason);
    // The next call gets the sequence only once the aborted generation has really stopped.
    const next = await model.doGenerate({ ...hello, maxOutputTokens: 1 });
    expect(performance.now() - started).toBeLessThan(fullMs / 2);
    expect(next.usage.outputTokens.total).toBe(1);
  });

  it("calls a tool through the JSON grammar: the input parses and has the required keys", async () => {
    const { runtime } = runtimeFor();
    const { stream } = await runtime.languageModel().doStream({
      prompt: [{ role: "user", content: [{ type: "text", text: "What is the weather in Paris?" }] }],
      tools: [
        {
          type: "function",
          name: "get_weather",
          description: "Weather forecast for a city",
          inputSchema: {
            type: "object",
            properties: { city: { type: "string", maxLength: 12 }, days: { type: "integer" } },
            required: ["city"],
            additionalProperties: false,
          },
        },
      ],
      toolChoice: { type: "required" },
      maxOutputTokens: 120,
      temperature: 0,
    });
    const parts = await readParts(stream);
    const call = parts.find((p) => p.type === "tool-call");
    if (call?.type !== "tool-call") throw new Error(`no tool call in ${JSON.stringify(parts)}`);
    expect(call.toolName).toBe("get_weather");
    expect(call.toolCallId).toMatch(/^call_/);
    const input = JSON.parse(call.input) as Record<string, unknown>;
    expect(typeof input.city).toBe("string");
    expect([...(input.city as string)].length).toBeLessThanOrEqual(12);
    if ("days" in input) expect(Number.isInteger(input.days)).toBe(true);
    expect(finishOf(parts).finishReason.unified).toBe("tool-calls");
    expect(parts.some((p) => p.type === "text-delta")).toBe(false); // the JSON itself is never shown as text
  });

  it("with toolChoice auto answers either with a valid tool call or with plain streamed text", async () => {
    const { runtime } = runtimeFor();
    const parts = await readParts(
      (
        await runtime.languageModel().doStream({
          prompt: [{ role: "user", content: [{ type: "text", text: "hello" }] }],
          tools: [
            {
              type: "function",
              name: "note",
              inputSchema: {
                type: "object",
                properties: { text: { type: "string", maxLength: 8 } },
                required: ["text"],
              },
            },
          ],
          maxOutputTokens: 200,
          temperature: 0,
        })
      ).stream,
    );
    const finish = finishOf(parts);
    const call = parts.find((p) => p.type === "tool-call");
    if (call?.type === "tool-call") {
      expect(JSON.parse(call.input)).toEqual({ text: expect.any(String) });
      expect(finish.finishReason.unified).toBe("tool-calls");
    } else {
      const text = parts.flatMap((p) => (p.type === "text-delta" ? [p.delta] : [])).join("");
      expect(text.startsWith("{")).toBe(false); // the answer's text, decoded out of the JSON reply
      expect(["stop", "length"]).toContain(finish.finishReason.unified);
    }
  });

  it("constrains the reply to a JSON response format", async () => {
    const { runtime } = runtimeFor();
    const result = await runtime.languageModel().doGenerate({
      ...hello,
      maxOutputTokens: 100,
      responseFormat: {
        type: "json",
        schema: {
          type: "object",
          properties: { name: { type: "string", maxLength: 8 }, ok: { type: "boolean" } },
          required: ["name", "ok"],
        },
      },
    });
    const text = (result.content[0] as { text: string }).text;
    expect(JSON.parse(text)).toEqual({ name: expect.any(String), ok: expect.any(Boolean) });
  });

  it("refuses a truncated or corrupt GGUF as unavailable, without crashing, and reports it in the state", async () => {
    const truncated = join(root, "truncated.gguf");
    writeFileSync(truncated, tinyGgufBytes({ seed: 7 }).subarray(0, 300_000));
    const corrupt = join(root, "corrupt.gguf");
    const bytes = Buffer.from(tinyGgufBytes({ seed: 7 }));
    bytes.writeBigUInt64LE(10n ** 12n, 8); // tensor count
    writeFileSync(corrupt, bytes);
    const notGguf = join(root, "not.gguf");
    writeFileSync(notGguf, "this is not a model\n".repeat(100));

    for (const [path, reason] of [
      [truncated, /truncated|runs past the end/],
      [corrupt, /implausible tensor count/],
      [notGguf, /does not start with "GGUF"/],
    ] as const) {
      const { runtime } = runtimeFor({ ASSISTANT_EMBEDDED_MODEL_PATH: path });
      const failure = await runtime
        .languageModel()
        .doStream(hello)
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(failure).toBeInstanceOf(ProviderFailure);
      expect((failure as ProviderFailure).kind).toBe("unavailable");
      expect((failure as ProviderFailure).message).toMatch(reason);
      expect(runtime.state()).toMatchObject({ status: "failed", error: expect.stringMatching(reason) });
    }
    expect(ggufProblem(modelFile)).toBeUndefined();
  });

  it("reports a missing custom file as unavailable; an unknown catalogue id never gets this far", async () => {
    const missing = runtimeFor({ ASSISTANT_EMBEDDED_MODEL_PATH: join(root, "nope.gguf") }).runtime;
    await expect(missing.languageModel().doGenerate(hello)).rejects.toMatchObject({
      kind: "unavailable",
      message: expect.stringContaining("does not exist"),
    });
    expect(missing.state()).toMatchObject({ status: "failed", file_present: false });

    // The settings registry refuses it, so the daemon does not start (test/config/envSettings.test.ts).
    expect(() => runtimeFor({ ASSISTANT_EMBEDDED_MODEL_PATH: "", ASSISTANT_EMBEDDED_MODEL: "gpt_9" })).toThrow(
      "ASSISTANT_EMBEDDED_MODEL: must be one of qwen3_0_6b",
    );
  });

  it("downloads a missing catalogue model in the background, falling through meanwhile, then loads it", async () => {
    const body = tinyGgufBytes({ seed: 11 });
    const server = await startModelServer(body, { delayMs: 1_500 }); // still downloading when the call gives up
    try {
      const downloader = new ModelDownloader();
      const { runtime, dataDir } = runtimeFor(
        {
          ASSISTANT_EMBEDDED_MODEL_PATH: "",
          ASSISTANT_EMBEDDED_MODEL: "smollm2_360m",
          ASSISTANT_EMBEDDED_MODEL_URL: `${server.url}/tiny.gguf`,
          ASSISTANT_EMBEDDED_MODEL_SHA256: createHash("sha256").update(body).digest("hex"),
        },
        undefined,
        downloader,
      );
      const model = runtime.languageModel();
      await expect(model.doGenerate(hello)).rejects.toMatchObject({
        kind: "unavailable",
        message: expect.stringContaining("is downloading"),
      });
      expect(runtime.state().status).toBe("downloading");
      expect(await downloader.wait()).toMatchObject({ status: "completed", bytes_done: body.length });
      expect(runtime.state()).toMatchObject({ status: "unloaded", file_present: true, size_bytes: body.length });

      const result = await model.doGenerate(hello);
      expect(result.usage.outputTokens.total).toBeGreaterThan(0);
      expect(runtime.state()).toMatchObject({ status: "loaded", path: join(dataDir, "models", "smollm2_360m.gguf") });
    } finally {
      await server.close();
    }
  });

  it("calibrates threads on the first load, shows it while it measures, stores it per file and reuses it", async () => {
    const logger = recordingLogger();
    const { runtime, dataDir } = runtimeFor({ ASSISTANT_EMBEDDED_THREADS: "" }, logger);
    expect(runtime.state()).toMatchObject({ calibration: null, threads_source: "machine", threads: machineThreads() });
    const seen = new Set<string>();
    const poll = setInterval(() => seen.add(runtime.state().status), 0);
    const loadStarted = performance.now();
    try {
      await runtime.languageModel().doGenerate(hello);
    } finally {
      clearInterval(poll);
    }
    const loadMs = performance.now() - loadStarted;
    expect(seen).toContain("calibrating");

    const state = runtime.state();
    const calibration = state.calibration!;
    expect(calibration).toMatchObject({ automatic: true, threads: expect.any(Number) });
    expect(calibration.tokens_per_second).toBeGreaterThan(0);
    expect(calibration.candidates.map((c) => c.threads)).toEqual(threadCandidates());
    expect(calibration.candidates.map((c) => c.threads)).toContain(calibration.threads);
    // The context runs with the measured count.
    expect(state).toMatchObject({ status: "loaded", threads: calibration.threads, threads_source: "calibration" });
    // Bounded: the budget, plus the one token that may be under way when it runs out.
    expect(calibration.duration_ms).toBeLessThanOrEqual(CALIBRATION_BUDGET_MS + 1000);
    expect(loadMs).toBeLessThan(CALIBRATION_BUDGET_MS + 10_000);
    expect(logger.messages.filter((m) => m === "embedded model calibrated")).toHaveLength(1);

    const stored = JSON.parse(readFileSync(join(dataDir, "models", "embedded_calibration.json"), "utf8"));
    expect(stored.entries).toHaveLength(1);
    expect(stored.entries[0]).toMatchObject({ file: { path: modelFile }, ...calibration });
    expect(stored.entries[0].machine.backend).toMatch(/llama\.cpp/);

    // A reload and a new runtime (daemon restart) use the stored measurement: no second one.
    await runtime.unload();
    await runtime.languageModel().doGenerate(hello);
    const restartLog = recordingLogger();
    const restarted = createEmbeddedRuntime({
      settings: readSettings({ ASSISTANT_EMBEDDED_MODEL_PATH: modelFile, ASSISTANT_EMBEDDED_GPU: "0" }),
      paths: dataPaths(dataDir),
      downloader: new ModelDownloader(),
      logger: restartLog,
    });
    runtimes.push(restarted);
    expect(restarted.state()).toMatchObject({
      threads: calibration.threads,
      threads_source: "calibration",
      calibration,
    });
    await restarted.languageModel().doGenerate(hello);
    expect(restarted.state()).toMatchObject({ status: "loaded", threads: calibration.threads, calibration });
    expect(logger.messages.filter((m) => m === "embedded model calibrated")).toHaveLength(1);
    expect(restartLog.messages).not.toContain("embedded model calibrated");
  });

  it("measures again when the model file changes (touched or replaced) or the machine is another one", async () => {
    const file = join(root, "changing.gguf");
    writeTinyGguf(file, { seed: 7 });
    const dataDir = mkdtempSync(join(root, "data-"));
    const logger = recordingLogger();
    const load = async (machineId: string) => {
      const runtime = createEmbeddedRuntime({
        settings: readSettings({ ASSISTANT_EMBEDDED_MODEL_PATH: file, ASSISTANT_EMBEDDED_GPU: "0" }),
        paths: dataPaths(dataDir),
        downloader: new ModelDownloader(),
        logger,
        machineId,
      });
      runtimes.push(runtime);
      await runtime.languageModel().doGenerate(hello);
      return runtime.state().calibration!;
    };
    const measurements = () => logger.messages.filter((m) => m === "embedded model calibrated").length;

    const first = await load("machine-a");
    expect(measurements()).toBe(1);
    expect((await load("machine-a")).measured_at).toBe(first.measured_at);
    expect(measurements()).toBe(1);

    // Touched: same bytes, another mtime.
    const later = new Date(Date.now() + 60_000);
    utimesSync(file, later, later);
    await load("machine-a");
    expect(measurements()).toBe(2);
    // Replaced by another file of the same size.
    writeTinyGguf(file, { seed: 8 });
    utimesSync(file, new Date(Date.now() + 120_000), new Date(Date.now() + 120_000));
    await load("machine-a");
    expect(measurements()).toBe(3);

    // Another machine measures for itself; each keeps its own entry.
    await load("machine-b");
    expect(measurements()).toBe(4);
    await load("machine-a");
    await load("machine-b");
    expect(measurements()).toBe(4);
    const stored = JSON.parse(readFileSync(join(dataDir, "models", "embedded_calibration.json"), "utf8"));
    expect(stored.entries.map((e: { machine: { cpu: string } }) => e.machine.cpu).sort()).toEqual([
      "machine-a",
      "machine-b",
    ]);
  });

  it("ASSISTANT_EMBEDDED_THREADS wins: no measurement at load, the set count runs", async () => {
    const logger = recordingLogger();
    const { runtime, dataDir } = runtimeFor({ ASSISTANT_EMBEDDED_THREADS: "2" }, logger);
    await runtime.languageModel().doGenerate(hello);
    expect(runtime.state()).toMatchObject({
      status: "loaded",
      threads: 2,
      threads_source: "setting",
      calibration: null,
    });
    expect(logger.messages).not.toContain("embedded model calibrated");
    expect(existsSync(join(dataDir, "models", "embedded_calibration.json"))).toBe(false);

    // A calibration on request still measures and is shown, but the setting keeps its count.
    const measured = await runtime.calibrate();
    expect(measured.automatic).toBe(false);
    expect(runtime.state()).toMatchObject({ threads: 2, threads_source: "setting", calibration: measured });
  });

  it("stays within its time budget: a slow candidate is cut after a few tokens", async () => {
    const budgeted = createEmbeddedRuntime({
      settings: readSettings({ ASSISTANT_EMBEDDED_MODEL_PATH: modelFile, ASSISTANT_EMBEDDED_GPU: "0" }),
      paths: dataPaths(mkdtempSync(join(root, "data-"))),
      downloader: new ModelDownloader(),
      calibrationBudgetMs: 1,
    });
    runtimes.push(budgeted);
    await budgeted.languageModel().doGenerate(hello);
    const calibration = budgeted.state().calibration!;
    // Out of time at once: every candidate stops at the fewest tokens a rate needs, instead of 32.
    for (const candidate of calibration.candidates) expect(candidate.tokens).toBeLessThanOrEqual(3);
    expect(calibration.tokens_per_second).toBeGreaterThan(0);
  });

  it("calibrates on request: measures again, writes the file and applies the count", async () => {
    const { runtime, dataDir } = runtimeFor({ ASSISTANT_EMBEDDED_THREADS: "" });
    const automatic = (await runtime.calibrate()).measured_at; // the first load measures; no second run
    expect(runtime.state().calibration).toMatchObject({ automatic: true, measured_at: automatic });
    const calibration = await runtime.calibrate();
    expect(calibration.automatic).toBe(false);
    expect(calibration.measured_at).not.toBe(automatic);
    expect(calibration.threads).toBeGreaterThanOrEqual(1);
    expect(calibration.threads).toBeLessThanOrEqual(availableParallelism());
    const stored = JSON.parse(readFileSync(join(dataDir, "models", "embedded_calibration.json"), "utf8"));
    expect(stored.entries).toHaveLength(1);
    expect(stored.entries[0]).toMatchObject(calibration);
    expect(runtime.state()).toMatchObject({ status: "loaded", threads: calibration.threads, calibration });
    // Still answers with the new context.
    const { stream } = await runtime.languageModel().doStream(hello);
    expect(finishOf(await readParts(stream)).usage.outputTokens.total).toBeGreaterThan(0);
  });

  it("ignores a calibration measured with another model file or in an older format", () => {
    const dataDir = mkdtempSync(join(root, "data-"));
    const file = join(dataDir, "models", "embedded_calibration.json");
    mkdirSync(join(dataDir, "models"));
    const settings = readSettings({ ASSISTANT_EMBEDDED_MODEL_PATH: modelFile });
    const runtime = () =>
      createEmbeddedRuntime({ settings, paths: dataPaths(dataDir), downloader: new ModelDownloader(), machineId: "m" });
    const entry = {
      file: { path: modelFile, size: 123, mtime_ms: 1 },
      machine: { cpu: "m", backend: "llama.cpp" },
      measured_at: "2026-01-01T00:00:00.000Z",
      automatic: true,
      threads: 7,
      gpu_layers: 0,
      tokens_per_second: 9,
      first_token_ms: 1,
      duration_ms: 5,
      candidates: [],
    };
    writeFileSync(file, JSON.stringify({ entries: [entry] }));
    expect(runtime().state()).toMatchObject({
      calibration: null,
      threads: machineThreads(),
      threads_source: "machine",
    });
    // The same entry for the file as it is now applies.
    const info = statSync(modelFile);
    const current = { ...entry, file: { path: modelFile, size: info.size, mtime_ms: Math.round(info.mtimeMs) } };
    writeFileSync(file, JSON.stringify({ entries: [current] }));
    expect(runtime().state()).toMatchObject({ threads: 7, threads_source: "calibration" });
    // The single-model file of earlier versions is measured again.
    writeFileSync(file, JSON.stringify({ model_id: "custom", model_size: info.size, threads: 7 }));
    expect(runtime().state()).toMatchObject({ calibration: null, threads_source: "machine" });
  });
});
