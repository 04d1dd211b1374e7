import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ProviderFailure } from "../../../src/llm/errors.ts";
import { createOpenRouterProvider } from "../../../src/llm/providers/openrouter.ts";
import { type ScriptedServer, startOpenAiServer } from "../servers/openaiServer.ts";
import { finishOf, PROMPT, PROMPT_WORDS, providerContext, readParts, rejection, textDeltas } from "./helpers.ts";

let server: ScriptedServer;
beforeAll(async () => {
  server = await startOpenAiServer({
    models: [
      {
        id: "meta-llama/llama-3.1-8b-instruct",
        name: "Llama 3.1 8B",
        created: 1_721_692_800,
        context_length: 131_072,
        pricing: { prompt: "0.00000002", completion: "0.00000005", request: "0" },
      },
      { id: "openrouter/auto", context_length: 2_000_000 },
    ],
  });
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
});

const KEY = "sk-or-v1-secret-abcdef";

describe("cloud_b (OpenRouter)", () => {
  it("streams with the key and the HTTP-Referer / X-Title headers from the router file", async () => {
    server.enqueue({ kind: "reply", text: "Routed hello" });
    const provider = createOpenRouterProvider(
      providerContext(
        {
          providers: {
            cloud_b: {
              api_key_ref: "vault://cloud_b_api_key",
              base_url: `${server.url}/api/v1`,
              site_url: "https://assistant.example",
              app_title: "Assistant Tests",
            },
          },
        },
        { secrets: { cloud_b_api_key: KEY }, env: { CLOUD_B_SITE_URL: "https://ignored.example" } },
      ),
    );
    expect(provider).toMatchObject({ id: "cloud_b", local: false });
    const model = await provider.languageModel("meta-llama/llama-3.1-8b-instruct");
    const parts = await readParts((await model.doStream({ prompt: PROMPT, maxOutputTokens: 20 })).stream);

    expect(textDeltas(parts).join("")).toBe("Routed hello");
    const finish = finishOf(parts);
    expect(finish.usage.inputTokens.total).toBe(PROMPT_WORDS);
    expect(finish.usage.outputTokens.total).toBe(2);
    const [request] = server.requests;
    expect(request!.path).toBe("/api/v1/chat/completions");
    expect(request!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(request!.headers["http-referer"]).toBe("https://assistant.example");
    expect(request!.headers["x-title"]).toBe("Assistant Tests");
    expect(request!.body).toMatchObject({ model: "meta-llama/llama-3.1-8b-instruct", stream: true, max_tokens: 20 });
  });

  it("takes the headers from CLOUD_B_SITE_URL / CLOUD_B_APP_TITLE and the key from CLOUD_B_API_KEY", async () => {
    const provider = createOpenRouterProvider(
      providerContext(
        { providers: { cloud_b: { base_url: `${server.url}/v1` } } },
        {
          env: {
            CLOUD_B_API_KEY: "sk-or-env-key-1",
            CLOUD_B_SITE_URL: "https://env.example",
            CLOUD_B_APP_TITLE: "Env Title",
          },
        },
      ),
    );
    await readParts((await (await provider.languageModel("openrouter/auto")).doStream({ prompt: PROMPT })).stream);
    const [request] = server.requests;
    expect(request!.path).toBe("/v1/chat/completions");
    expect(request!.headers.authorization).toBe("Bearer sk-or-env-key-1");
    expect(request!.headers["http-referer"]).toBe("https://env.example");
    expect(request!.headers["x-title"]).toBe("Env Title");
  });

  it("maps route config, including top_k, repeat_penalty and thinking_level, into the body", async () => {
    const provider = createOpenRouterProvider(
      providerContext({ providers: { cloud_b: { base_url: server.url } } }, { env: { CLOUD_B_API_KEY: "sk-or-1234" } }),
    );
    const options = provider.callOptions({
      temperature: 0.7,
      top_p: 0.8,
      top_k: 30,
      repeat_penalty: 1.1,
      max_tokens: 99,
      thinking_level: "max",
    });
    const model = await provider.languageModel("openrouter/auto");
    await readParts((await model.doStream({ ...options, prompt: PROMPT })).stream);
    expect(server.requests[0]!.body).toMatchObject({
      temperature: 0.7,
      top_p: 0.8,
      top_k: 30,
      max_tokens: 99,
      repetition_penalty: 1.1,
      reasoning: { effort: "xhigh" },
    });

    expect(provider.callOptions({ thinking_level: "low" }).providerOptions).toEqual({
      openrouter: { reasoning: { effort: "low" } },
    });
    // An unknown level is ignored, not sent.
    expect(provider.callOptions({ thinking_level: "turbo", temperature: 1 })).toEqual({ temperature: 1 });
  });

  it("is unavailable without a key, saying how to add one", async () => {
    const provider = createOpenRouterProvider(providerContext({}, { secrets: { cloud_a_api_key: "sk-a-secret-1" } }));
    const error = (await rejection(() => provider.languageModel("openrouter/auto"))) as ProviderFailure;
    expect(error).toBeInstanceOf(ProviderFailure);
    expect(error.kind).toBe("unavailable");
    expect(error.message).toContain("assistant config provider add-cloud-b");
    expect(error.message).toContain("CLOUD_B_API_KEY");
    expect(error.message).not.toContain("sk-a-secret-1");
  });

  it("lists models with context length and per-token USD prices as numbers", async () => {
    // The list is public: no key needed.
    const provider = createOpenRouterProvider(
      providerContext({ providers: { cloud_b: { base_url: `${server.url}/api/v1` } } }),
    );
    expect(await provider.listModels()).toEqual([
      {
        provider: "cloud_b",
        model: "meta-llama/llama-3.1-8b-instruct",
        options: {
          modified_at: "2024-07-23T00:00:00.000Z",
          context_length_max: 131_072,
          extra: { pricing: { prompt: 0.00000002, completion: 0.00000005 } },
        },
      },
      { provider: "cloud_b", model: "openrouter/auto", options: { context_length_max: 2_000_000 } },
    ]);
    expect(server.requests[0]).toMatchObject({ method: "GET", path: "/api/v1/models" });
    expect(server.requests[0]!.headers.authorization).toBeUndefined();
  });
});
