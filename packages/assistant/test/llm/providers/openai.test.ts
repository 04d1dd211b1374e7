import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ProviderFailure } from "../../../src/llm/errors.ts";
import { createOpenAiProvider } from "../../../src/llm/providers/openai.ts";
import { type ScriptedServer, startOpenAiServer } from "../servers/openaiServer.ts";
import {
  closedPort,
  finishOf,
  PROMPT,
  PROMPT_WORDS,
  providerContext,
  readParts,
  rejection,
  textDeltas,
} from "./helpers.ts";

let server: ScriptedServer;
beforeAll(async () => {
  server = await startOpenAiServer({
    models: [
      { id: "gpt-4o-mini", object: "model", created: 1_700_000_000, owned_by: "openai" },
      { id: "text-embedding-3-small", object: "model", owned_by: "openai" },
    ],
  });
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
});

const SECRET = "sk-vault-secret-value-123";

function vaultProvider(baseUrl = server.url) {
  return createOpenAiProvider(
    providerContext(
      {
        providers: { cloud_a: { api_key_ref: "vault://cloud_a_api_key", base_url: baseUrl, organization: "org-test" } },
      },
      { secrets: { cloud_a_api_key: SECRET } },
    ),
  );
}

describe("cloud_a (OpenAI chat completions)", () => {
  it("streams a reply with the vault key, organization and usage, to {base_url}/v1/chat/completions", async () => {
    server.enqueue({ kind: "reply", text: ["Hel", "lo", " there"] });
    const provider = vaultProvider();
    expect(provider).toMatchObject({ id: "cloud_a", local: false });

    const model = await provider.languageModel("gpt-4o-mini");
    const { stream } = await model.doStream({ prompt: PROMPT, maxOutputTokens: 64 });
    const parts = await readParts(stream);

    expect(textDeltas(parts)).toEqual(["Hel", "lo", " there"]);
    const finish = finishOf(parts);
    expect(finish.finishReason.unified).toBe("stop");
    expect(finish.usage.inputTokens.total).toBe(PROMPT_WORDS);
    expect(finish.usage.outputTokens.total).toBe(3);

    const [request] = server.requests;
    expect(request).toMatchObject({ method: "POST", path: "/v1/chat/completions" });
    expect(request!.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(request!.headers["openai-organization"]).toBe("org-test");
    expect(request!.body).toMatchObject({
      model: "gpt-4o-mini",
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 64,
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Say hello to the tests" },
      ],
    });
  });

  it("accepts base_url ending in /v1 and takes the key from CLOUD_A_API_KEY without api_key_ref", async () => {
    const provider = createOpenAiProvider(
      providerContext(
        { providers: { cloud_a: { base_url: `${server.url}/v1/` } } },
        { env: { CLOUD_A_API_KEY: "sk-env-456789" } },
      ),
    );
    const model = await provider.languageModel("gpt-4o-mini");
    const parts = await readParts((await model.doStream({ prompt: PROMPT })).stream);
    expect(textDeltas(parts).join("")).toBe("Hello from the test server");
    expect(server.requests[0]!.path).toBe("/v1/chat/completions");
    expect(server.requests[0]!.headers.authorization).toBe("Bearer sk-env-456789");
    expect(server.requests[0]!.headers["openai-organization"]).toBeUndefined();
  });

  it("streams a tool call in pieces into one tool-call part with the JSON input", async () => {
    server.enqueue({
      kind: "tool_call",
      name: "read_file",
      arguments: { path: "/tmp/notes.txt", limit: 20 },
      id: "call_7",
    });
    const model = await vaultProvider().languageModel("gpt-4o-mini");
    const { stream } = await model.doStream({
      prompt: PROMPT,
      tools: [
        {
          type: "function",
          name: "read_file",
          description: "Reads a file",
          inputSchema: { type: "object", properties: { path: { type: "string" }, limit: { type: "number" } } },
        },
      ],
    });
    const parts = await readParts(stream);
    const calls = parts.filter((p) => p.type === "tool-call");
    expect(calls).toEqual([
      expect.objectContaining({ type: "tool-call", toolCallId: "call_7", toolName: "read_file" }),
    ]);
    expect(JSON.parse((calls[0] as { input: string }).input)).toEqual({ path: "/tmp/notes.txt", limit: 20 });
    expect(finishOf(parts).finishReason.unified).toBe("tool-calls");
    expect((server.requests[0]!.body as { tools: unknown[] }).tools).toHaveLength(1);
  });

  it("maps route config to the request body; reasoning models get max_completion_tokens and reasoning_effort", async () => {
    const provider = vaultProvider();
    const config = {
      temperature: 0.3,
      top_p: 0.9,
      top_k: 40,
      frequency_penalty: 0.5,
      presence_penalty: 0.25,
      max_tokens: 123,
      thinking_level: "high",
    };
    const options = provider.callOptions(config);
    // OpenAI has no top_k: it is not passed on.
    expect(options).toEqual({
      temperature: 0.3,
      topP: 0.9,
      frequencyPenalty: 0.5,
      presencePenalty: 0.25,
      maxOutputTokens: 123,
      reasoning: "high",
    });
    expect(provider.callOptions(undefined)).toEqual({});

    const chat = await provider.languageModel("gpt-4o-mini");
    await readParts((await chat.doStream({ ...options, prompt: PROMPT })).stream);
    expect(server.requests[0]!.body).toMatchObject({
      temperature: 0.3,
      top_p: 0.9,
      frequency_penalty: 0.5,
      presence_penalty: 0.25,
      max_tokens: 123,
    });

    const reasoning = await provider.languageModel("o3-mini");
    await readParts((await reasoning.doStream({ ...options, prompt: PROMPT })).stream);
    const body = server.requests[1]!.body as Record<string, unknown>;
    expect(body).toMatchObject({ max_completion_tokens: 123, reasoning_effort: "high" });
    expect(body.max_tokens).toBeUndefined();
  });

  it("without a key is unavailable with a message saying how to set one and no secret in it", async () => {
    const context = providerContext(
      {},
      { env: { OTHER_KEY: "sk-unrelated-secret" }, secrets: { other: "sk-other-secret" } },
    );
    const provider = createOpenAiProvider(context);
    const error = await rejection(() => provider.languageModel("gpt-4o-mini"));
    expect(error).toBeInstanceOf(ProviderFailure);
    expect((error as ProviderFailure).kind).toBe("unavailable");
    const message = (error as ProviderFailure).message;
    expect(message).toContain("assistant config provider add-cloud-a");
    expect(message).toContain("assistant vault set cloud_a_api_key");
    expect(message).toContain("CLOUD_A_API_KEY");
    expect(message).not.toMatch(/sk-unrelated-secret|sk-other-secret/);
    expect(await rejection(() => provider.listModels())).toMatchObject({ kind: "unavailable" });

    const missingRef = createOpenAiProvider(
      providerContext(
        { providers: { cloud_a: { api_key_ref: "vault://cloud_a_api_key" } } },
        { secrets: { other: "sk-other-secret" } },
      ),
    );
    const refError = (await rejection(() => missingRef.languageModel("gpt-4o-mini"))) as ProviderFailure;
    expect(refError.kind).toBe("unavailable");
    expect(refError.message).toContain("vault://cloud_a_api_key");
    expect(refError.message).not.toContain("sk-other-secret");
    expect(server.requests).toHaveLength(0);
  });

  it("lists models from GET /v1/models with modified_at from `created`", async () => {
    const models = await vaultProvider().listModels();
    expect(models).toEqual([
      { provider: "cloud_a", model: "gpt-4o-mini", options: { modified_at: "2023-11-14T22:13:20.000Z" } },
      { provider: "cloud_a", model: "text-embedding-3-small", options: {} },
    ]);
    expect(server.requests[0]).toMatchObject({ method: "GET", path: "/v1/models" });
    expect(server.requests[0]!.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(server.requests[0]!.headers["openai-organization"]).toBe("org-test");
  });

  it("reports listing failures as ProviderFailure naming provider and URL, never the key", async () => {
    server.enqueue({ kind: "status", status: 401, path: "/v1/models" });
    const refused = (await rejection(() => vaultProvider().listModels())) as ProviderFailure;
    expect(refused).toBeInstanceOf(ProviderFailure);
    expect(refused).toMatchObject({ kind: "refused", status: 401 });
    expect(refused.message).toContain(`cloud_a: GET ${server.url}/v1/models answered HTTP 401`);
    expect(refused.message).not.toContain(SECRET);

    server.enqueue({ kind: "status", status: 503, path: "/v1/models" });
    expect(await rejection(() => vaultProvider().listModels())).toMatchObject({ kind: "server", status: 503 });

    const port = await closedPort();
    const down = (await rejection(() => vaultProvider(`http://127.0.0.1:${port}`).listModels())) as ProviderFailure;
    expect(down.kind).toBe("unavailable");
    expect(down.message).toContain(`cloud_a: cannot reach http://127.0.0.1:${port}/v1/models`);
    expect(down.message).not.toContain(SECRET);
  });
});
