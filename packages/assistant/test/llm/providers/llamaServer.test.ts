import { afterEach, describe, expect, it } from "vitest";
import { createLlamaServerProvider } from "../../../src/llm/providers/llamaServer.ts";
import { type OpenAiServerOptions, type ScriptedServer, startOpenAiServer } from "../servers/openaiServer.ts";
import { finishOf, PROMPT, PROMPT_WORDS, providerContext, readParts, textDeltas } from "./helpers.ts";

let server: ScriptedServer | undefined;
afterEach(() => server?.close());

const LLAMA_MODELS = [
  {
    id: "qwen2.5-1.5b-instruct-q4_k_m.gguf",
    object: "model",
    created: 1_735_689_600,
    owned_by: "llamacpp",
    meta: { n_ctx_train: 32_768, n_params: 1_543_714_304 },
  },
];

async function start(options: OpenAiServerOptions = {}) {
  server = await startOpenAiServer({ models: LLAMA_MODELS, ...options });
  return server;
}

describe("lowbit_server (llama.cpp server)", () => {
  it("streams from a base_url without /v1 and sends no Authorization header when no key is set", async () => {
    const srv = await start();
    srv.enqueue({ kind: "reply", text: "tiny model says hi" });
    const provider = createLlamaServerProvider(
      providerContext({ providers: { lowbit_server: { base_url: srv.url } } }),
    );
    expect(provider).toMatchObject({ id: "lowbit_server", local: true });
    const model = await provider.languageModel("qwen2.5-1.5b-instruct-q4_k_m.gguf");
    const parts = await readParts((await model.doStream({ prompt: PROMPT, maxOutputTokens: 16 })).stream);

    expect(textDeltas(parts)).toEqual(["tiny", " model", " says", " hi"]);
    expect(finishOf(parts).usage).toMatchObject({ inputTokens: { total: PROMPT_WORDS }, outputTokens: { total: 4 } });
    const [request] = srv.requests;
    expect(request!.path).toBe("/v1/chat/completions");
    expect(request!.headers.authorization).toBeUndefined();
    expect(request!.body).toMatchObject({ model: "qwen2.5-1.5b-instruct-q4_k_m.gguf", stream: true, max_tokens: 16 });
  });

  it("sends the key from api_key_ref when one is set", async () => {
    const srv = await start();
    const provider = createLlamaServerProvider(
      providerContext(
        { providers: { lowbit_server: { base_url: `${srv.url}/v1`, api_key_ref: "LLAMA_KEY" } } },
        { env: { LLAMA_KEY: "llama-secret-42" } },
      ),
    );
    await readParts((await (await provider.languageModel("m")).doStream({ prompt: PROMPT })).stream);
    expect(srv.requests[0]!.headers.authorization).toBe("Bearer llama-secret-42");
  });

  it("puts top_k and repeat_penalty, which llama-server samples with, into the body next to tools", async () => {
    const srv = await start();
    srv.enqueue({ kind: "tool_call", name: "list_dir", arguments: '{"path":"."}' });
    const provider = createLlamaServerProvider(
      providerContext({ providers: { lowbit_server: { base_url: srv.url } } }),
    );
    const options = provider.callOptions({
      temperature: 0.2,
      top_k: 20,
      repeat_penalty: 1.15,
      num_ctx: 8192,
      num_gpu: 99,
      max_tokens: 77,
    });
    expect(options).toEqual({
      temperature: 0.2,
      topK: 20,
      maxOutputTokens: 77,
      providerOptions: { llamacpp: { repeat_penalty: 1.15 } },
    });
    const model = await provider.languageModel("m");
    const { stream } = await model.doStream({
      ...options,
      prompt: PROMPT,
      tools: [{ type: "function", name: "list_dir", inputSchema: { type: "object", properties: {} } }],
    });
    const parts = await readParts(stream);
    expect(parts.find((p) => p.type === "tool-call")).toMatchObject({ toolName: "list_dir", input: '{"path":"."}' });

    const body = srv.requests[0]!.body as Record<string, unknown>;
    expect(body).toMatchObject({ temperature: 0.2, top_k: 20, repeat_penalty: 1.15, max_tokens: 77 });
    expect(body.tools).toEqual([
      expect.objectContaining({ type: "function", function: expect.objectContaining({ name: "list_dir" }) }),
    ]);
    // Start-up flags of llama-server, not request fields.
    expect(body).not.toHaveProperty("num_ctx");
    expect(body).not.toHaveProperty("num_gpu");
  });

  it("lists models from /v1/models with the training context and num_ctx from /props", async () => {
    const srv = await start({ props: { default_generation_settings: { n_ctx: 4096 }, total_slots: 1 } });
    const provider = createLlamaServerProvider(
      providerContext({ providers: { lowbit_server: { base_url: srv.url } } }),
    );
    expect(await provider.listModels()).toEqual([
      {
        provider: "lowbit_server",
        model: "qwen2.5-1.5b-instruct-q4_k_m.gguf",
        options: { modified_at: "2025-01-01T00:00:00.000Z", context_length_max: 32_768, num_ctx: 4096 },
      },
    ]);
    expect(srv.requests.map((r) => `${r.method} ${r.path}`).sort()).toEqual(["GET /props", "GET /v1/models"]);
  });

  it("lists models without num_ctx when the server has no /props", async () => {
    const srv = await start();
    const provider = createLlamaServerProvider(
      providerContext({ providers: { lowbit_server: { base_url: srv.url } } }),
    );
    const [model] = await provider.listModels();
    expect(model!.options).toEqual({ modified_at: "2025-01-01T00:00:00.000Z", context_length_max: 32_768 });
  });
});
