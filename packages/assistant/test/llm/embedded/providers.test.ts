import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LanguageModelV4CallOptions, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { afterAll, describe, expect, it } from "vitest";
import { dataPaths } from "../../../src/config/paths.ts";
import { llmRouterSchema } from "../../../src/config/schemas/llmRouter.ts";
import { readSettings } from "../../../src/config/settings.ts";
import { ProviderFailure } from "../../../src/llm/errors.ts";
import { createCoreProvider } from "../../../src/llm/providers/core.ts";
import { createEmbeddedProvider } from "../../../src/llm/providers/embedded.ts";
import type { EmbeddedRuntime, EmbeddedState, LanguageModelV4, ProviderContext } from "../../../src/llm/types.ts";

// The two built-in providers: assistant_embedded and assistant_core, over fixed runtime states so each wording
// (downloading, failed...) is checked; the real runtime is exercised in runtime.test.ts and test/llm/daemon/.

const root = mkdtempSync(join(tmpdir(), "assistant-builtin-providers-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const baseState: EmbeddedState = {
  status: "unloaded",
  model_id: "qwen3_0_6b",
  path: "/data/models/qwen3_0_6b.gguf",
  file_present: false,
  size_bytes: null,
  threads: 2,
  threads_source: "machine",
  context_size: 8192,
  gpu: "auto",
  gpu_layers: 0,
  calibration: null,
  error: null,
};

function context(state: Partial<EmbeddedState> = {}, model?: LanguageModelV4): ProviderContext {
  const embedded: EmbeddedRuntime = {
    state: () => ({ ...baseState, ...state }),
    languageModel: () => model ?? ({ modelId: "fixed" } as LanguageModelV4),
    embed: async (texts) => texts.map(() => [1, 0]),
    unload: async () => {},
    calibrate: async () => {
      throw new Error("not used");
    },
    close: async () => {},
  };
  return {
    config: llmRouterSchema.parse({}),
    env: {},
    settings: readSettings({ MODEL_CACHE_HOME: join(root, "cache") }),
    vault: { get: () => "" },
    paths: dataPaths(join(root, "data")),
    embedded,
  };
}

function ask(question: string): LanguageModelV4CallOptions {
  return { prompt: [{ role: "user", content: [{ type: "text", text: question }] }] };
}

async function readParts(stream: ReadableStream<LanguageModelV4StreamPart>): Promise<LanguageModelV4StreamPart[]> {
  const parts: LanguageModelV4StreamPart[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

describe("assistant_embedded provider", () => {
  it("serves the runtime's model for model default or the active catalogue id, and refuses another id", async () => {
    const model = { modelId: "qwen3_0_6b" } as LanguageModelV4;
    const provider = createEmbeddedProvider(context({}, model));
    expect(provider).toMatchObject({ id: "assistant_embedded", local: true });
    expect(await provider.languageModel("default")).toBe(model);
    expect(await provider.languageModel("qwen3_0_6b")).toBe(model);
    const refused = await provider.languageModel("llama3_2_1b").catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ProviderFailure);
    expect(refused).toMatchObject({
      kind: "unavailable",
      message: expect.stringContaining("ASSISTANT_EMBEDDED_MODEL"),
    });
  });

  it("maps the route config to call options, repeat_penalty through providerOptions", () => {
    const provider = createEmbeddedProvider(context());
    expect(provider.callOptions(undefined)).toEqual({});
    expect(
      provider.callOptions({
        temperature: 0.4,
        top_p: 0.9,
        top_k: 30,
        frequency_penalty: 0.2,
        presence_penalty: 0.1,
        repeat_penalty: 1.15,
        max_tokens: 256,
      }),
    ).toEqual({
      temperature: 0.4,
      topP: 0.9,
      topK: 30,
      frequencyPenalty: 0.2,
      presencePenalty: 0.1,
      maxOutputTokens: 256,
      providerOptions: { assistant_embedded: { repeat_penalty: 1.15 } },
    });
  });

  it("lists the catalogue with whether each file is downloaded", async () => {
    mkdirSync(join(root, "cache"), { recursive: true });
    writeFileSync(join(root, "cache", "smollm2_360m.gguf"), "GGUF");
    const models = await createEmbeddedProvider(context()).listModels();
    expect(models.map((m) => m.model)).toEqual(["qwen3_0_6b", "qwen2_5_0_5b", "smollm2_360m", "llama3_2_1b"]);
    const byId = Object.fromEntries(models.map((m) => [m.model, m.options]));
    expect(byId.smollm2_360m).toMatchObject({
      context_length_max: 8192,
      extra: { downloaded: true, size_bytes: 386_404_992, active: false },
    });
    expect(byId.qwen3_0_6b).toMatchObject({ extra: { downloaded: false, active: true } });
  });

  it("lists a custom model file as the active model", async () => {
    const models = await createEmbeddedProvider(
      context({ model_id: "custom", path: "/m/mine.gguf", file_present: true, size_bytes: 1234 }),
    ).listModels();
    expect(models.at(-1)).toEqual({
      provider: "assistant_embedded",
      model: "custom",
      options: { extra: { label: "/m/mine.gguf", downloaded: true, size_bytes: 1234, active: true } },
    });
  });
});

describe("assistant_core provider", () => {
  it("says plainly that no model is available and how to get one, streamed in a few deltas with zero usage", async () => {
    const provider = createCoreProvider(context());
    expect(provider).toMatchObject({ id: "assistant_core", local: true });
    expect(await provider.listModels()).toEqual([{ provider: "assistant_core", model: "core", options: {} }]);
    const model = await provider.languageModel("core");
    expect(model).toMatchObject({ specificationVersion: "v4", provider: "assistant_core", modelId: "core" });

    const parts = await readParts((await model.doStream(ask("Write me a poem about the sea"))).stream);
    const deltas = parts.flatMap((p) => (p.type === "text-delta" ? [p.delta] : []));
    expect(deltas.length).toBeGreaterThan(2);
    const text = deltas.join("");
    expect(text).toContain("No language model is available right now");
    expect(text).toContain("not downloaded yet");
    for (const hint of [
      "assistant config models embedded-download",
      "assistant discover",
      "assistant config provider add-cloud-a",
      "/help",
      "/status",
      "/embedded",
    ]) {
      expect(text).toContain(hint);
    }
    expect(text).not.toMatch(/^Help:|^Status:/);
    expect(parts.at(-1)).toEqual({
      type: "finish",
      finishReason: { unified: "stop", raw: undefined },
      usage: {
        inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: 0, text: 0, reasoning: 0 },
      },
    });

    const generated = await model.doGenerate(ask("Write me a poem about the sea"));
    expect(generated.content).toEqual([{ type: "text", text }]);
  });

  it("answers help and status questions first, with what it knows of the embedded model", async () => {
    const help = await (await createCoreProvider(context()).languageModel("core")).doGenerate(ask("/help"));
    expect(help.content[0]).toMatchObject({ type: "text", text: expect.stringMatching(/^Help: type `\/help`/) });

    const downloading = createCoreProvider(context({ status: "downloading" }));
    const status = await (await downloading.languageModel("core")).doGenerate(ask("what is your status?"));
    const text = (status.content[0] as { text: string }).text;
    expect(text).toMatch(/^Status: /);
    expect(text).toContain("The embedded model (qwen3_0_6b) is downloading");

    const calibrating = createCoreProvider(context({ status: "calibrating" }));
    const meanwhile = await (await calibrating.languageModel("core")).doGenerate(ask("what is your status?"));
    expect((meanwhile.content[0] as { text: string }).text).toContain("(qwen3_0_6b) is loading; try again");

    const failed = createCoreProvider(context({ status: "failed", error: "llama.cpp has no prebuilt binary" }));
    const reply = await (await failed.languageModel("core")).doGenerate(ask("hi"));
    expect((reply.content[0] as { text: string }).text).toContain("is unavailable: llama.cpp has no prebuilt binary.");
  });

  it("names the configured target that failed and its fix, instead of how to configure one", async () => {
    const model = await createCoreProvider(context()).languageModel("core");
    const failed = [
      { provider: "lowbit_server", model: "fake-7b", reason: "cannot connect to 127.0.0.1:18080 (ECONNREFUSED)" },
      { provider: "assistant_embedded", model: "default", reason: "the embedded model is not downloaded" },
    ];
    const reply = await model.doGenerate({ ...ask("hello"), providerOptions: { assistant_core: { failed } } });
    const text = (reply.content[0] as { text: string }).text;
    expect(text.split("\n\n")[0]).toBe(
      "lowbit_server/fake-7b failed: cannot connect to 127.0.0.1:18080 (ECONNREFUSED); start that server or run `assistant discover`.",
    );
    expect(text).toContain("`assistant doctor` checks every provider");
    expect(text).not.toContain("To get a model");
    expect(text).not.toContain("add-cloud-a");
  });
});
