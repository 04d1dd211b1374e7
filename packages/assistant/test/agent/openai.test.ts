import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestDaemon, tempDataDir } from "../helpers/daemon.ts";
import { type ScriptedServer, startOpenAiServer } from "../llm/servers/openaiServer.ts";
import { startScriptedDaemon } from "./helpers.ts";

// The OpenAI-compatible API end to end: Node's fetch plays the OpenAI client against a real daemon whose LLM is a
// scripted OpenAI-protocol server configured in llm_router.yaml.

let server: ScriptedServer;
let daemon: TestDaemon;
let dataDir: string;

// No fallback to the built-in assistant_core: a provider failure fails the task. One retry: a stream cut
// mid-answer is restarted on the same model.
const ROUTER = (url: string) => `global:
  enable_fallback: false
  default_max_retries: 1
providers:
  lowbit_server:
    base_url: ${url}/v1
task_types:
  conversation:
    primary: {provider: lowbit_server, model: chat-model}
  code_generation:
    primary: {provider: lowbit_server, model: code-model}
`;

beforeAll(async () => {
  server = await startOpenAiServer();
  dataDir = tempDataDir();
  writeFileSync(join(dataDir, "llm_router.yaml"), ROUTER(server.url));
  daemon = await startScriptedDaemon(dataDir);
});
afterAll(async () => {
  await daemon.stop();
  await server.close();
});

/** What an OpenAI client sends: JSON with the API key as a bearer token. */
function openai(
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  token: string | null = daemon.token,
  signal?: AbortSignal,
) {
  return fetch(`${daemon.url}${path}`, {
    ...(signal ? { signal } : {}),
    method: body === undefined ? "GET" : "POST",
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
}

type LlmMessage = { role: string; content: string | Array<{ type: string; text: string }> };
function lastLlmMessages(): string[] {
  const body = server.requests.filter((r) => r.path.endsWith("/chat/completions")).at(-1)!.body as {
    messages: LlmMessage[];
  };
  return body.messages.map(
    (m) => `${m.role}:${typeof m.content === "string" ? m.content : m.content.map((p) => p.text).join("")}`,
  );
}

/** The `data:` payloads of an SSE body, in order ([DONE] as the string). */
function dataLines(text: string): unknown[] {
  return text
    .split("\n\n")
    .map((block) => block.split("\n").find((line) => line.startsWith("data: ")))
    .filter((line): line is string => line !== undefined)
    .map((line) => line.slice(6))
    .map((data) => (data === "[DONE]" ? data : JSON.parse(data)));
}

describe("GET /v1/models", () => {
  it("lists the assistant and a model per task type", async () => {
    const res = await openai("/v1/models");
    expect(res.status).toBe(200);
    const list = (await res.json()) as { object: string; data: Array<Record<string, unknown>> };
    expect(list.object).toBe("list");
    const ids = list.data.map((m) => m.id);
    expect(ids[0]).toBe("assistant");
    expect(ids).toContain("assistant/conversation");
    expect(ids).toContain("assistant/code_generation");
    expect(ids).not.toContain("assistant/image_generation");
    expect(list.data[0]).toMatchObject({ object: "model", owned_by: "assistant" });
    expect(typeof list.data[0]!.created).toBe("number");
  });

  it("needs the API token", async () => {
    const none = await openai("/v1/models", undefined, {}, null);
    expect(none.status).toBe(401);
    expect(((await none.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
    const wrong = await openai("/v1/chat/completions", { model: "assistant", messages: [] }, {}, "not-the-token");
    expect(wrong.status).toBe(401);
  });
});

describe("POST /v1/chat/completions", () => {
  it("answers with the task's reply, usage and ids", async () => {
    server.enqueue({ kind: "reply", text: "Paris is the capital.", usage: { input: 17, output: 5 } });
    const res = await openai("/v1/chat/completions", {
      model: "assistant/conversation",
      messages: [{ role: "user", content: "What is the capital of France?" }],
      temperature: 0.2,
      max_tokens: 100,
      user: "someone",
    });
    expect(res.status).toBe(200);
    const taskId = res.headers.get("x-assistant-task-id");
    expect(taskId).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers.get("x-assistant-session")).toMatch(/^[0-9a-f-]{36}$/);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      id: `chatcmpl-${taskId}`,
      object: "chat.completion",
      model: "assistant/conversation",
      choices: [{ index: 0, message: { role: "assistant", content: "Paris is the capital." }, finish_reason: "stop" }],
      usage: { prompt_tokens: 17, completion_tokens: 5, total_tokens: 22 },
    });
    expect(typeof body.created).toBe("number");
    expect((server.requests.at(-1)!.body as { model: string }).model).toBe("chat-model");
    // A plain answer is a chat turn: no report file (docs/agent.md#reports), the report is still built on request.
    expect(existsSync(join(dataDir, "reports", `${taskId}.json`))).toBe(false);
    const report = await fetch(`${daemon.url}/api/tasks/${taskId}/report`, {
      headers: { authorization: `Bearer ${daemon.token}` },
    });
    expect(((await report.json()) as { reply: string }).reply).toBe("Paris is the capital.");
  });

  it("routes assistant/<task_type> to that task type's model", async () => {
    server.enqueue({ kind: "reply", text: "def f(): pass" });
    const res = await openai("/v1/chat/completions", {
      model: "assistant/code_generation",
      messages: [{ role: "user", content: [{ type: "text", text: "Write a function" }] }],
    });
    expect(res.status).toBe(200);
    expect((server.requests.at(-1)!.body as { model: string }).model).toBe("code-model");
  });

  it("gives the request's earlier messages to the model as history", async () => {
    server.enqueue({ kind: "reply", text: "About two million people." });
    const res = await openai("/v1/chat/completions", {
      model: "assistant",
      messages: [
        { role: "system", content: "You are a pirate." },
        { role: "user", content: "What is the capital of France?" },
        { role: "assistant", content: [{ type: "text", text: "Paris, the capital." }] },
        { role: "user", content: "How many people live there?" },
      ],
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { choices: Array<{ message: { content: string } }> };
    expect(body.choices[0]!.message.content).toBe("About two million people.");
    const sent = lastLlmMessages();
    const question = sent.indexOf("user:What is the capital of France?");
    const answer = sent.indexOf("assistant:Paris, the capital.");
    expect(question).toBeGreaterThan(0);
    expect(answer).toBeGreaterThan(question);
    expect(sent.at(-1)).toBe("user:How many people live there?");
    expect(sent.some((m) => m.includes("You are a pirate."))).toBe(false);
  });

  it("continues a session named by X-Assistant-Session", async () => {
    server.enqueue({ kind: "reply", text: "Noted: your cat is Tom." });
    const first = await openai("/v1/chat/completions", {
      model: "assistant",
      messages: [{ role: "user", content: "My cat is called Tom." }],
    });
    const session = first.headers.get("x-assistant-session")!;
    server.enqueue({ kind: "reply", text: "Tom." });
    const second = await openai(
      "/v1/chat/completions",
      { model: "assistant", messages: [{ role: "user", content: "What is my cat called?" }] },
      { "X-Assistant-Session": session },
    );
    expect(second.status).toBe(200);
    expect(second.headers.get("x-assistant-session")).toBe(session);
    const sent = lastLlmMessages();
    expect(sent).toContain("user:My cat is called Tom.");
    expect(sent).toContain("assistant:Noted: your cat is Tom.");

    const unknown = await openai(
      "/v1/chat/completions",
      { model: "assistant", messages: [{ role: "user", content: "hi" }] },
      { "X-Assistant-Session": "no-such-session" },
    );
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe("not_found");
  });

  it("streams chunks that join to the reply and end with [DONE]", async () => {
    server.enqueue({ kind: "reply", text: ["One", " two", " three"], usage: { input: 9, output: 3 } });
    const res = await openai("/v1/chat/completions", {
      model: "assistant/conversation",
      messages: [{ role: "user", content: "count to three" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const taskId = res.headers.get("x-assistant-task-id");
    expect(taskId).toMatch(/^[0-9a-f-]{36}$/);
    const data = dataLines(await res.text());
    expect(data.at(-1)).toBe("[DONE]");
    type Chunk = {
      id: string;
      object: string;
      model: string;
      choices: Array<{ index: number; delta: { role?: string; content?: string }; finish_reason: string | null }>;
      usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
    };
    const chunks = data.slice(0, -1) as Chunk[];
    for (const chunk of chunks) {
      expect(chunk).toMatchObject({
        id: `chatcmpl-${taskId}`,
        object: "chat.completion.chunk",
        model: "assistant/conversation",
      });
    }
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: "assistant" });
    const withChoices = chunks.filter((c) => c.choices.length > 0);
    expect(withChoices.map((c) => c.choices[0]!.delta.content ?? "").join("")).toBe("One two three");
    expect(withChoices.at(-1)!.choices[0]).toMatchObject({ delta: {}, finish_reason: "stop" });
    expect(withChoices.slice(0, -1).every((c) => c.choices[0]!.finish_reason === null)).toBe(true);
    expect(chunks.at(-1)!.usage).toEqual({ prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 });
    expect(data.some((d) => typeof d === "object" && JSON.stringify(d).includes("tool_calls"))).toBe(false);
  });

  it("starts a new line in the stream when a retry restarts the answer", async () => {
    server.enqueue(
      { kind: "cut", afterChunks: 2, text: ["Half", " an", " answer"] },
      { kind: "reply", text: "Whole answer" },
    );
    const res = await openai("/v1/chat/completions", {
      model: "assistant/conversation",
      messages: [{ role: "user", content: "tell me something" }],
      stream: true,
    });
    const data = dataLines(await res.text());
    expect(data.at(-1)).toBe("[DONE]");
    const text = (data.slice(0, -1) as Array<{ choices: Array<{ delta: { content?: string } }> }>)
      .map((c) => c.choices[0]!.delta.content ?? "")
      .join("");
    expect(text).toBe("Half an\nWhole answer");
    const task = (await (await openai(`/api/tasks/${res.headers.get("x-assistant-task-id")}`)).json()) as {
      reply: string;
      model: string;
    };
    expect(task).toMatchObject({ reply: "Whole answer" });
  });

  it("ends the stream with the error of a failed task", async () => {
    server.enqueue({ kind: "status", status: 401 });
    const res = await openai("/v1/chat/completions", {
      model: "assistant/conversation",
      messages: [{ role: "user", content: "this will fail" }],
      stream: true,
    });
    expect(res.status).toBe(200);
    const data = dataLines(await res.text());
    expect(data.at(-1)).toBe("[DONE]");
    expect(data.at(-2)).toMatchObject({ error: { code: "provider_error" } });
    expect(JSON.stringify(data)).not.toContain('finish_reason":"stop');
  });

  it("cancels the task when a streaming client goes away", async () => {
    server.enqueue({ kind: "reply", text: "one two three four five six seven eight", chunkDelayMs: 400 });
    const controller = new AbortController();
    const res = await openai(
      "/v1/chat/completions",
      { model: "assistant/conversation", messages: [{ role: "user", content: "count slowly" }], stream: true },
      {},
      daemon.token,
      controller.signal,
    );
    const taskId = res.headers.get("x-assistant-task-id")!;
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    await expect
      .poll(async () => ((await (await openai(`/api/tasks/${taskId}`)).json()) as { status: string }).status, {
        timeout: 5_000,
      })
      .toBe("cancelled");
  });

  it("cancels the task when a waiting client goes away", async () => {
    server.enqueue({ kind: "hang" });
    const before = server.requests.length;
    const controller = new AbortController();
    const pending = openai(
      "/v1/chat/completions",
      { model: "assistant/conversation", messages: [{ role: "user", content: "never answered" }] },
      {},
      daemon.token,
      controller.signal,
    ).catch((error: unknown) => error);
    await expect.poll(() => server.requests.length, { timeout: 5_000 }).toBeGreaterThan(before);
    const list = (await (await openai("/api/tasks?limit=1")).json()) as {
      items: Array<{ id: string; message: string }>;
    };
    expect(list.items[0]!.message).toBe("never answered");
    controller.abort();
    expect(await pending).toBeInstanceOf(Error);
    await expect
      .poll(
        async () => ((await (await openai(`/api/tasks/${list.items[0]!.id}`)).json()) as { status: string }).status,
        { timeout: 5_000 },
      )
      .toBe("cancelled");
  });

  it("answers a slash command without the model", async () => {
    const before = server.requests.length;
    const res = await openai("/v1/chat/completions", {
      model: "assistant",
      messages: [{ role: "user", content: "/help" }],
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { choices: Array<{ message: { role: string; content: string } }> };
    expect(body.choices[0]!.message.role).toBe("assistant");
    expect(body.choices[0]!.message.content).toContain("set <CATEGORY> <PROVIDER> <MODEL>");

    const streamed = await openai("/v1/chat/completions", {
      model: "assistant",
      messages: [{ role: "user", content: "/help" }],
      stream: true,
    });
    const data = dataLines(await streamed.text());
    expect(data.at(-1)).toBe("[DONE]");
    const text = (data.slice(0, -1) as Array<{ choices: Array<{ delta: { content?: string } }> }>)
      .map((c) => c.choices[0]!.delta.content ?? "")
      .join("");
    expect(text).toBe(body.choices[0]!.message.content);
    expect(server.requests.length).toBe(before);
  });

  it("refuses bad requests with the API's error shape", async () => {
    const user = { role: "user", content: "hi" };
    const cases: Array<[unknown, number, string]> = [
      [{ model: "assistant" }, 400, "body.messages"],
      [{ model: "assistant", messages: [] }, 400, "body.messages"],
      [{ model: "assistant", messages: [user, { role: "assistant", content: "hello" }] }, 400, "must be the user's"],
      [{ model: "assistant", messages: [{ role: "user", content: "   " }] }, 400, "empty"],
      [{ model: "assistant", messages: "hi" }, 400, "body.messages"],
      [
        { model: "assistant", messages: [{ role: "user", content: 42 }] },
        400,
        "body.messages.0.content: content must be",
      ],
      [{ model: "assistant", messages: [{ role: "wizard", content: "hi" }] }, 400, "body.messages.0.role"],
      [
        { model: "assistant", messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "x" } }] }] },
        400,
        "text parts",
      ],
      [{ model: 7, messages: [user] }, 400, "body.model"],
      [{ messages: [user] }, 400, "body.model"],
      [{ model: "assistant", messages: [user], stream: "yes" }, 400, "body.stream"],
      [{ model: "assistant", messages: Array.from({ length: 501 }, () => user) }, 400, "body.messages"],
      [{ model: "assistant", messages: [{ role: "user", content: "x".repeat(100_001) }] }, 400, "100000"],
      [{ model: "gpt-4o", messages: [user] }, 404, "gpt-4o"],
      [{ model: "assistant/no_such_type", messages: [user] }, 404, "/v1/models"],
      ["{not json", 400, "JSON"],
    ];
    const before = server.requests.length;
    for (const [body, status, text] of cases) {
      const res = await openai("/v1/chat/completions", body);
      const label = JSON.stringify(body).slice(0, 120);
      expect(res.status, label).toBe(status);
      const error = ((await res.json()) as { error: { code: string; message: string } }).error;
      expect(error.code, label).toBe(status === 404 ? "not_found" : "invalid_request");
      expect(error.message, label).toContain(text);
    }
    expect(server.requests.length).toBe(before);
  });

  it("returns a failed task's error", async () => {
    server.enqueue({ kind: "status", status: 401 });
    const res = await openai("/v1/chat/completions", {
      model: "assistant/conversation",
      messages: [{ role: "user", content: "this will fail" }],
    });
    expect(res.status).toBe(502);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("provider_error");
    expect(body.error.message).toContain("HTTP 401");
  });
});
