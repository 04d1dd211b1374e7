import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ProviderFailure } from "../../../src/llm/errors.ts";
import { createOllamaProvider, ollamaRoot } from "../../../src/llm/providers/ollama.ts";
import { startOllamaServer } from "../servers/ollamaServer.ts";
import type { ScriptedServer } from "../servers/openaiServer.ts";
import { finishOf, PROMPT, PROMPT_WORDS, providerContext, readParts, rejection, textDeltas } from "./helpers.ts";

let server: ScriptedServer;
beforeAll(async () => {
  server = await startOllamaServer({
    models: [
      {
        name: "llama3.2:3b",
        family: "llama",
        parameter_size: "3.2B",
        context_length: 131_072,
        capabilities: ["completion", "tools"],
        modified_at: "2025-03-01T10:00:00Z",
      },
      {
        name: "qwen3:0.6b",
        family: "qwen3",
        parameter_size: "751.63M",
        context_length: 40_960,
        capabilities: ["completion", "thinking"],
      },
    ],
  });
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
});

const provider = () => createOllamaProvider(providerContext({ providers: { local_server: { base_url: server.url } } }));

describe("local_server (Ollama native API)", () => {
  it("streams NDJSON from /api/chat with usage from prompt_eval_count / eval_count", async () => {
    server.enqueue({ kind: "reply", text: "local hello there" });
    const p = provider();
    expect(p).toMatchObject({ id: "local_server", local: true });
    const model = await p.languageModel("llama3.2:3b");
    const parts = await readParts((await model.doStream({ prompt: PROMPT })).stream);

    // The final `done` line carries content "", which the library passes on as an empty delta.
    expect(textDeltas(parts)).toEqual(["local", " hello", " there", ""]);
    const finish = finishOf(parts);
    expect(finish.finishReason.unified).toBe("stop");
    expect(finish.usage.inputTokens.total).toBe(PROMPT_WORDS);
    expect(finish.usage.outputTokens.total).toBe(3);
    const [request] = server.requests;
    expect(request).toMatchObject({ method: "POST", path: "/api/chat" });
    expect(request!.body).toMatchObject({ model: "llama3.2:3b", stream: true });
  });

  it("sends route config and call settings as Ollama `options` (num_ctx, num_gpu, num_predict...)", async () => {
    const p = provider();
    const options = p.callOptions({
      temperature: 0.4,
      top_p: 0.95,
      top_k: 50,
      repeat_penalty: 1.2,
      num_ctx: 16_384,
      num_gpu: 0,
      max_tokens: 200,
      thinking_level: "none",
    });
    expect(options).toEqual({
      temperature: 0.4,
      topP: 0.95,
      topK: 50,
      maxOutputTokens: 200,
      reasoning: "none",
      providerOptions: { ollama: { options: { num_ctx: 16_384, num_gpu: 0, repeat_penalty: 1.2 } } },
    });
    const model = await p.languageModel("qwen3:0.6b");
    await readParts((await model.doStream({ ...options, prompt: PROMPT, stopSequences: ["END"] })).stream);

    const body = server.requests[0]!.body as Record<string, unknown>;
    expect(body.options).toEqual({
      temperature: 0.4,
      top_p: 0.95,
      top_k: 50,
      num_predict: 200,
      stop: ["END"],
      num_ctx: 16_384,
      num_gpu: 0,
      repeat_penalty: 1.2,
    });
    expect(body.think).toBe(false);
    // Ollama ignores these at the top level; they must only appear inside `options`.
    expect(body).not.toHaveProperty("temperature");
    expect(body).not.toHaveProperty("top_p");
    expect(body).not.toHaveProperty("max_output_tokens");
  });

  it("answers doGenerate (stream: false) with the same option rewriting", async () => {
    server.enqueue({ kind: "reply", text: "whole answer" });
    const model = await provider().languageModel("llama3.2:3b");
    const result = await model.doGenerate({ prompt: PROMPT, maxOutputTokens: 12, temperature: 0.1 });
    expect(result.content).toEqual([expect.objectContaining({ type: "text", text: "whole answer" })]);
    expect(result.usage.outputTokens.total).toBe(2);
    expect(server.requests[0]!.body).toMatchObject({ stream: false, options: { num_predict: 12, temperature: 0.1 } });
  });

  it("parses a tool call into a tool-call part with JSON input", async () => {
    server.enqueue({ kind: "tool_call", name: "web_search", arguments: { query: "ollama tools" } });
    const model = await provider().languageModel("llama3.2:3b");
    const { stream } = await model.doStream({
      prompt: PROMPT,
      tools: [
        {
          type: "function",
          name: "web_search",
          inputSchema: { type: "object", properties: { query: { type: "string" } } },
        },
      ],
    });
    const parts = await readParts(stream);
    const call = parts.find((p) => p.type === "tool-call");
    expect(call).toMatchObject({ toolName: "web_search" });
    expect(JSON.parse((call as { input: string }).input)).toEqual({ query: "ollama tools" });
    expect(finishOf(parts).finishReason.unified).toBe("tool-calls");
    expect((server.requests[0]!.body as { tools: unknown[] }).tools).toHaveLength(1);
  });

  it("resolves the root URL: base_url, else LOCAL_SERVER_HOST, else localhost:11434; /api suffix tolerated", async () => {
    const ctx = (base_url: string | undefined, env: NodeJS.ProcessEnv = {}) =>
      providerContext(base_url ? { providers: { local_server: { base_url } } } : {}, { env });
    expect(ollamaRoot(ctx(undefined))).toBe("http://localhost:11434");
    expect(ollamaRoot(ctx(undefined, { LOCAL_SERVER_HOST: "http://gpu-box:11434/" }))).toBe("http://gpu-box:11434");
    expect(ollamaRoot(ctx("http://lan:11434/api", { LOCAL_SERVER_HOST: "http://other:1" }))).toBe("http://lan:11434");

    const viaEnv = createOllamaProvider(ctx(undefined, { LOCAL_SERVER_HOST: `${server.url}/api/` }));
    await readParts((await (await viaEnv.languageModel("llama3.2:3b")).doStream({ prompt: PROMPT })).stream);
    expect(server.requests[0]!.path).toBe("/api/chat");
  });

  it("lists models from /api/tags with /api/show details: family, size, context length, capabilities", async () => {
    const models = await provider().listModels();
    expect(models).toEqual([
      {
        provider: "local_server",
        model: "llama3.2:3b",
        options: {
          family: "llama",
          parameter_size: "3.2B",
          modified_at: "2025-03-01T10:00:00Z",
          context_length_max: 131_072,
          capabilities: ["completion", "tools"],
        },
      },
      {
        provider: "local_server",
        model: "qwen3:0.6b",
        options: {
          family: "qwen3",
          parameter_size: "751.63M",
          modified_at: "2025-01-02T03:04:05.000Z",
          context_length_max: 40_960,
          capabilities: ["completion", "thinking"],
        },
      },
    ]);
    const shows = server.requests.filter((r) => r.path === "/api/show");
    expect(shows.map((r) => r.body)).toEqual(
      expect.arrayContaining([{ model: "llama3.2:3b" }, { model: "qwen3:0.6b" }]),
    );
    expect(shows.map((r) => r.headers["content-type"])).toEqual(["application/json", "application/json"]);
  });

  it("reports a failing /api/tags as a server ProviderFailure naming the URL", async () => {
    server.enqueue({ kind: "status", status: 500, path: "/api/tags" });
    const error = (await rejection(() => provider().listModels())) as ProviderFailure;
    expect(error).toBeInstanceOf(ProviderFailure);
    expect(error).toMatchObject({ kind: "server", status: 500 });
    expect(error.message).toBe(`local_server: GET ${server.url}/api/tags answered HTTP 500: scripted HTTP 500`);
  });
});
