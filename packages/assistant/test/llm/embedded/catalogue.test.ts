import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { dataPaths } from "../../../src/config/paths.ts";
import { readSettingsOf } from "../../../src/config/settings.ts";
import { resolveEmbeddedModel } from "../../../src/llm/embedded/catalogue.ts";
import { EMBEDDED_CATALOGUE } from "../../../src/llm/embedded/catalogueEntries.ts";
import { EMBEDDED_MODEL_SETTINGS } from "../../../src/llm/settings.ts";

const paths = dataPaths("/data");
/** The model an environment selects, its variables parsed by the settings registry as the daemon does. */
const modelFor = (env: NodeJS.ProcessEnv) => resolveEmbeddedModel(readSettingsOf(env, EMBEDDED_MODEL_SETTINGS), paths);

describe("embedded catalogue", () => {
  it("pins every entry to a Hugging Face revision with a sha256 and a size", () => {
    expect(new Set(EMBEDDED_CATALOGUE.map((e) => e.id)).size).toBe(EMBEDDED_CATALOGUE.length);
    for (const entry of EMBEDDED_CATALOGUE) {
      expect(entry.url).toMatch(/^https:\/\/huggingface\.co\/[^/]+\/[^/]+\/resolve\/[0-9a-f]{40}\/[^/]+\.gguf$/);
      expect(entry.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(entry.size_bytes).toBeGreaterThan(100_000_000);
      expect(entry.context_length).toBeGreaterThanOrEqual(8192);
    }
  });

  it("defaults to qwen3_0_6b in the data directory's models folder, or MODEL_CACHE_HOME", () => {
    expect(modelFor({})).toEqual({
      model_id: "qwen3_0_6b",
      path: join("/data", "models", "qwen3_0_6b.gguf"),
      url: EMBEDDED_CATALOGUE[0]!.url,
      sha256: EMBEDDED_CATALOGUE[0]!.sha256,
      size_bytes: 639_446_688,
      context_length: 40_960,
      custom: false,
    });
    const cached = modelFor({ MODEL_CACHE_HOME: "/cache", ASSISTANT_EMBEDDED_MODEL: "smollm2_360m" });
    expect(cached).toMatchObject({ model_id: "smollm2_360m", path: join("/cache", "smollm2_360m.gguf") });
  });

  it("uses ASSISTANT_EMBEDDED_MODEL_PATH as is", () => {
    expect(
      modelFor({ ASSISTANT_EMBEDDED_MODEL_PATH: "/m/mine.gguf", ASSISTANT_EMBEDDED_MODEL: "llama3_2_1b" }),
    ).toEqual({
      model_id: "custom",
      path: "/m/mine.gguf",
      custom: true,
    });
  });

  it("refuses an unknown id, listing the known ones", () => {
    expect(() => modelFor({ ASSISTANT_EMBEDDED_MODEL: "gpt_9" })).toThrow(
      'environment: ASSISTANT_EMBEDDED_MODEL: must be one of qwen3_0_6b, qwen2_5_0_5b, smollm2_360m, llama3_2_1b (got "gpt_9")',
    );
  });

  it("takes a mirror URL over https, or plain http on loopback, with its own sha256 and size", () => {
    const sha = "a".repeat(64);
    const mirror = modelFor({
      ASSISTANT_EMBEDDED_MODEL_URL: "http://127.0.0.1:8080/q.gguf",
      ASSISTANT_EMBEDDED_MODEL_SHA256: sha.toUpperCase(),
    });
    expect(mirror).toMatchObject({ url: "http://127.0.0.1:8080/q.gguf", sha256: sha });
    expect(mirror.size_bytes).toBeUndefined(); // another file: the catalogue size no longer applies
    expect(
      modelFor({ ASSISTANT_EMBEDDED_MODEL_URL: "https://mirror.example/q.gguf", ASSISTANT_EMBEDDED_MODEL_SIZE: "42" }),
    ).toMatchObject({ url: "https://mirror.example/q.gguf", sha256: EMBEDDED_CATALOGUE[0]!.sha256, size_bytes: 42 });

    for (const [env, message] of [
      [{ ASSISTANT_EMBEDDED_MODEL_URL: "http://mirror.example/q.gguf" }, /only on a loopback host$/],
      [{ ASSISTANT_EMBEDDED_MODEL_URL: "https://u:p@mirror.example/q.gguf" }, /it contains credentials$/],
      [{ ASSISTANT_EMBEDDED_MODEL_URL: "not a url" }, /this is not a URL$/],
      [{ ASSISTANT_EMBEDDED_MODEL_SHA256: "abc" }, /SHA256: must be 64 hexadecimal characters \(got "abc"\)$/],
      [{ ASSISTANT_EMBEDDED_MODEL_SIZE: "-1" }, /SIZE: must be a whole number of bytes of at least 1 \(got "-1"\)$/],
    ] as const) {
      expect(() => modelFor(env)).toThrow(message);
    }
  });
});
