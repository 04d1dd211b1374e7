import { APICallError, type LanguageModelV4 } from "@ai-sdk/provider";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOllamaProvider } from "../../../src/llm/providers/ollama.ts";
import { createOpenAiProvider } from "../../../src/llm/providers/openai.ts";
import { createOpenRouterProvider } from "../../../src/llm/providers/openrouter.ts";
import { startOllamaServer } from "../servers/ollamaServer.ts";
import { type ScriptedServer, startOpenAiServer } from "../servers/openaiServer.ts";
import { PROMPT, providerContext, rejection } from "./helpers.ts";

// How failures surface from doStream, per library, so the router can classify them: HTTP errors reject
// doStream with an APICallError; a stream that breaks after it started rejects the reader.

let openai: ScriptedServer;
let ollama: ScriptedServer;
beforeAll(async () => {
  [openai, ollama] = await Promise.all([startOpenAiServer(), startOllamaServer()]);
});
afterAll(() => Promise.all([openai.close(), ollama.close()]));

interface Case {
  name: string;
  server: () => ScriptedServer;
  model: () => Promise<LanguageModelV4>;
}

const cases: Case[] = [
  {
    name: "cloud_a (@ai-sdk/openai)",
    server: () => openai,
    model: () =>
      createOpenAiProvider(
        providerContext(
          { providers: { cloud_a: { base_url: openai.url } } },
          { env: { CLOUD_A_API_KEY: "sk-test-1" } },
        ),
      ).languageModel("gpt-4o-mini"),
  },
  {
    name: "cloud_b (@openrouter/ai-sdk-provider)",
    server: () => openai,
    model: () =>
      createOpenRouterProvider(
        providerContext(
          { providers: { cloud_b: { base_url: openai.url } } },
          { env: { CLOUD_B_API_KEY: "sk-or-test-1" } },
        ),
      ).languageModel("openai/gpt-4o-mini"),
  },
  {
    name: "local_server (ollama-ai-provider-v2)",
    server: () => ollama,
    model: () =>
      createOllamaProvider(providerContext({ providers: { local_server: { base_url: ollama.url } } })).languageModel(
        "llama3.2",
      ),
  },
];

/** Reads until the stream ends or fails; returns the text read and the failure, if any. */
async function drain(stream: ReadableStream<{ type: string; delta?: string }>) {
  let text = "";
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text, error: undefined };
      if (value.type === "text-delta") text += value.delta;
      if (value.type === "error") return { text, error: value };
    }
  } catch (error) {
    return { text, error };
  }
}

describe.each(cases)("$name", ({ server, model }) => {
  it("rejects doStream with an APICallError carrying status 500", async () => {
    server().enqueue({ kind: "status", status: 500 });
    const error = await rejection(async () => (await model()).doStream({ prompt: PROMPT }));
    expect(APICallError.isInstance(error)).toBe(true);
    expect((error as APICallError).statusCode).toBe(500);
  });

  it("rejects doStream with an APICallError carrying 429 and its Retry-After header", async () => {
    server().enqueue({ kind: "status", status: 429, headers: { "retry-after": "3" } });
    const error = (await rejection(async () => (await model()).doStream({ prompt: PROMPT }))) as APICallError;
    expect(APICallError.isInstance(error)).toBe(true);
    expect(error.statusCode).toBe(429);
    expect(error.responseHeaders?.["retry-after"]).toBe("3");
  });

  it("fails the reader when the connection is cut mid-stream, after the text already sent", async () => {
    server().enqueue({ kind: "cut", afterChunks: 2 });
    const { stream } = await (await model()).doStream({ prompt: PROMPT });
    const { text, error } = await drain(stream);
    expect(text).toBe("one two");
    expect(error).toBeDefined();
  });

  it("lets an abort end a stalled stream", async () => {
    server().enqueue({ kind: "stall", afterChunks: 1 });
    const controller = new AbortController();
    const { stream } = await (await model()).doStream({ prompt: PROMPT, abortSignal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    const { text, error } = await drain(stream);
    expect(text).toBe("one");
    expect(error).toBeDefined();
  });

  it("lets an abort end a request the server never answers", async () => {
    server().enqueue({ kind: "hang" });
    const started = performance.now();
    const error = await rejection(async () =>
      (await model()).doStream({ prompt: PROMPT, abortSignal: AbortSignal.timeout(150) }),
    );
    expect((error as Error).name).toMatch(/AbortError|TimeoutError/);
    expect(performance.now() - started).toBeLessThan(2000);
  });
});
