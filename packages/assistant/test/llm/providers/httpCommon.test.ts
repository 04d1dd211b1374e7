import { describe, expect, it } from "vitest";
import { ProviderFailure } from "../../../src/llm/errors.ts";
import {
  commonCallOptions,
  openAiBaseUrl,
  providerKey,
  reasoningLevel,
  serverRoot,
} from "../../../src/llm/providers/httpCommon.ts";
import { providerContext, rejection } from "./helpers.ts";

describe("OpenAI-compatible helpers", () => {
  it("normalises base_url to end in /v1 whether or not the user wrote it", () => {
    expect(openAiBaseUrl("http://localhost:8080")).toBe("http://localhost:8080/v1");
    expect(openAiBaseUrl("http://localhost:8080/")).toBe("http://localhost:8080/v1");
    expect(openAiBaseUrl("http://localhost:8080/v1")).toBe("http://localhost:8080/v1");
    expect(openAiBaseUrl("https://openrouter.ai/api/v1/")).toBe("https://openrouter.ai/api/v1");
    expect(openAiBaseUrl("https://proxy.example/openai")).toBe("https://proxy.example/openai/v1");
  });

  it("finds a server's root URL under an /api or /v1 suffix", () => {
    expect(serverRoot("http://h:11434")).toBe("http://h:11434");
    expect(serverRoot("http://h:11434/api/")).toBe("http://h:11434");
    expect(serverRoot("http://h:8080/v1")).toBe("http://h:8080");
  });

  it("maps thinking_level to the AI SDK reasoning levels and ignores other strings", () => {
    for (const level of ["none", "minimal", "low", "medium", "high", "xhigh", "max"]) {
      expect(reasoningLevel(level)).toBe(level);
    }
    expect(reasoningLevel("HIGH")).toBeUndefined();
    expect(reasoningLevel("turbo")).toBeUndefined();
    expect(reasoningLevel(undefined)).toBeUndefined();
  });

  it("maps the common route config keys and leaves out unset ones", () => {
    expect(
      commonCallOptions({
        temperature: 0,
        top_p: 0.5,
        top_k: 10,
        frequency_penalty: -0.5,
        presence_penalty: 1,
        repeat_penalty: 1.1,
        num_ctx: 4096,
        max_tokens: 1000,
        thinking_level: "minimal",
      }),
    ).toEqual({
      temperature: 0,
      topP: 0.5,
      frequencyPenalty: -0.5,
      presencePenalty: 1,
      maxOutputTokens: 1000,
      reasoning: "minimal",
    });
    expect(commonCallOptions({ max_tokens: 5 })).toEqual({ maxOutputTokens: 5 });
    expect(commonCallOptions(undefined)).toEqual({});
  });

  it("resolves keys: api_key_ref first, then the env fallback; a broken ref is unavailable", async () => {
    const both = providerContext(
      { providers: { cloud_a: { api_key_ref: "vault://a" } } },
      { secrets: { a: "from-vault-1" }, env: { CLOUD_A_API_KEY: "from-env-1" } },
    );
    expect(providerKey(both, "cloud_a", "CLOUD_A_API_KEY")).toBe("from-vault-1");
    expect(
      providerKey(providerContext({}, { env: { CLOUD_A_API_KEY: "from-env-1" } }), "cloud_a", "CLOUD_A_API_KEY"),
    ).toBe("from-env-1");
    expect(
      providerKey(providerContext({}, { env: { CLOUD_A_API_KEY: "" } }), "cloud_a", "CLOUD_A_API_KEY"),
    ).toBeUndefined();

    const broken = providerContext({ providers: { cloud_b: { api_key_ref: "MISSING_VAR" } } });
    const error = (await rejection(() => providerKey(broken, "cloud_b", "CLOUD_B_API_KEY"))) as ProviderFailure;
    expect(error).toBeInstanceOf(ProviderFailure);
    expect(error.kind).toBe("unavailable");
    expect(error.message).toBe("cloud_b: api_key_ref MISSING_VAR: the environment variable MISSING_VAR is not set");
  });
});
