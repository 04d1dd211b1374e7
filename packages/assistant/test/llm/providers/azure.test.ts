import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ProviderFailure } from "../../../src/llm/errors.ts";
import { createAzureProvider, DEFAULT_AZURE_API_VERSION } from "../../../src/llm/providers/azure.ts";
import { type ScriptedServer, startOpenAiServer } from "../servers/openaiServer.ts";
import { finishOf, PROMPT, PROMPT_WORDS, providerContext, readParts, rejection, textDeltas } from "./helpers.ts";

let server: ScriptedServer;
beforeAll(async () => {
  server = await startOpenAiServer();
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
});

const KEY = "azure-key-0123456789";

describe("cloud_azure (Azure OpenAI)", () => {
  it("streams from {base_url}/openai/deployments/{deployment}/chat/completions?api-version={version} with api-key", async () => {
    server.enqueue({ kind: "reply", text: "Hi from Azure" });
    const provider = createAzureProvider(
      providerContext(
        {
          providers: { cloud_azure: { api_key_ref: "vault://azure_key", base_url: server.url, version: "2024-06-01" } },
        },
        { secrets: { azure_key: KEY } },
      ),
    );
    expect(provider).toMatchObject({ id: "cloud_azure", local: false });
    const model = await provider.languageModel("my-gpt4o-deployment");
    const parts = await readParts((await model.doStream({ prompt: PROMPT, maxOutputTokens: 32 })).stream);

    expect(textDeltas(parts).join("")).toBe("Hi from Azure");
    expect(finishOf(parts).usage.inputTokens.total).toBe(PROMPT_WORDS);
    const [request] = server.requests;
    expect(request!.path).toBe("/openai/deployments/my-gpt4o-deployment/chat/completions");
    expect(request!.query).toEqual({ "api-version": "2024-06-01" });
    expect(request!.headers["api-key"]).toBe(KEY);
    expect(request!.headers.authorization).toBeUndefined();
    expect(request!.body).toMatchObject({ stream: true, max_tokens: 32 });
  });

  it("accepts an endpoint ending in /openai/ and defaults the api-version", async () => {
    const provider = createAzureProvider(
      providerContext(
        { providers: { cloud_azure: { api_key_ref: "AZURE_KEY_VAR", base_url: `${server.url}/openai/` } } },
        { env: { AZURE_KEY_VAR: KEY } },
      ),
    );
    await readParts((await (await provider.languageModel("dep")).doStream({ prompt: PROMPT })).stream);
    expect(server.requests[0]!.path).toBe("/openai/deployments/dep/chat/completions");
    expect(server.requests[0]!.query).toEqual({ "api-version": DEFAULT_AZURE_API_VERSION });
  });

  it("is unavailable without api_key_ref or base_url, saying what to set", async () => {
    const noKey = createAzureProvider(providerContext({ providers: { cloud_azure: { base_url: server.url } } }));
    const keyError = (await rejection(() => noKey.languageModel("dep"))) as ProviderFailure;
    expect(keyError).toBeInstanceOf(ProviderFailure);
    expect(keyError.kind).toBe("unavailable");
    expect(keyError.message).toContain("assistant vault set cloud_azure_api_key");

    const noUrl = createAzureProvider(
      providerContext({ providers: { cloud_azure: { api_key_ref: "vault://k" } } }, { secrets: { k: KEY } }),
    );
    const urlError = (await rejection(() => noUrl.languageModel("dep"))) as ProviderFailure;
    expect(urlError.kind).toBe("unavailable");
    expect(urlError.message).toContain("providers.cloud_azure.base_url");
    expect(urlError.message).not.toContain(KEY);
    expect(server.requests).toHaveLength(0);
  });

  it("lists the deployments the routes name, once each, without a network call", async () => {
    const provider = createAzureProvider(
      providerContext({
        providers: { cloud_azure: { base_url: server.url } },
        task_types: {
          conversation: {
            primary: { provider: "cloud_azure", model: "chat-dep" },
            fallback: [
              { provider: "cloud_a", model: "gpt-4o" },
              { provider: "cloud_azure", model: "mini-dep" },
            ],
          },
          code_generation: { primary: { provider: "cloud_azure", model: "chat-dep" } },
        },
      }),
    );
    expect(await provider.listModels()).toEqual([
      { provider: "cloud_azure", model: "chat-dep", options: {} },
      { provider: "cloud_azure", model: "mini-dep", options: {} },
    ]);
    expect(server.requests).toHaveLength(0);
  });
});
