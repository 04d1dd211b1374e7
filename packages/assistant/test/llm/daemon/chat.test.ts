import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startScriptedDaemon } from "../../agent/helpers.ts";
import { api as apiCall, type TestDaemon, tempDataDir } from "../../helpers/daemon.ts";
import { runCli } from "../../setup/helpers.ts";
import { type ScriptedServer, startOpenAiServer } from "../servers/openaiServer.ts";

// The chat surface end to end: a real daemon routes POST /api/message, slash commands and `assistant chat` to a
// local OpenAI-protocol server configured in llm_router.yaml.

let server: ScriptedServer;
let daemon: TestDaemon;
let dataDir: string;

const ROUTER = (url: string) => `# my router file
providers:
  lowbit_server:
    base_url: ${url}/v1   # my llama.cpp server
task_types:
  conversation:
    primary: {provider: lowbit_server, model: chat-model}
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

const api = (method: string, path: string, body?: unknown, token: string | null = daemon.token) =>
  apiCall(daemon, method, path, body, token);

function sseEvents(body: string): Array<{ event: string; data: Record<string, unknown> }> {
  return body
    .split("\n\n")
    .filter((block) => block.includes("data:"))
    .map((block) => {
      const lines = block.split("\n");
      return {
        event: lines
          .find((l) => l.startsWith("event:"))!
          .slice(6)
          .trim(),
        data: JSON.parse(lines.find((l) => l.startsWith("data:"))!.slice(5)),
      };
    });
}

describe("POST /api/message", () => {
  it("wait: true answers the whole reply and keeps the session's history for the next turn", async () => {
    server.enqueue({ kind: "reply", text: "Paris is the capital." });
    const first = await api("POST", "/api/message", { message: "What is the capital of France?", wait: true });
    expect(first.status).toBe(200);
    const reply = first.json();
    expect(reply).toMatchObject({
      reply: "Paris is the capital.",
      provider: "lowbit_server",
      model: "chat-model",
      task_type: "conversation",
    });
    expect(reply.session_id).toMatch(/^[0-9a-f-]{36}$/);

    server.enqueue({ kind: "reply", text: "About two million people." });
    const second = await api("POST", "/api/message", {
      message: "How many people live there?",
      session_id: reply.session_id,
      wait: true,
    });
    expect(second.json().reply).toBe("About two million people.");
    const sent = server.requests.at(-1)!.body as { messages: Array<{ role: string; content: string }> };
    const contents = sent.messages.map(
      (m) => `${m.role}:${typeof m.content === "string" ? m.content : JSON.stringify(m.content)}`,
    );
    expect(contents.some((c) => c.includes("What is the capital of France?"))).toBe(true);
    expect(contents.some((c) => c.startsWith("assistant:") && c.includes("Paris is the capital."))).toBe(true);
  });

  it("stream: true sends start, token and done events", async () => {
    server.enqueue({ kind: "reply", text: ["One", " two", " three"] });
    const res = await api("POST", "/api/message", {
      message: "count to three",
      stream: true,
      task_type: "conversation",
    });
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toContain("text/event-stream");
    const events = sseEvents(res.body);
    expect(events[0]).toMatchObject({ event: "start", data: { task_type: "conversation", classified: false } });
    expect(
      events
        .filter((e) => e.event === "token")
        .map((e) => e.data.delta)
        .join(""),
    ).toBe("One two three");
    expect(events.at(-1)).toMatchObject({ event: "done", data: { reply: "One two three", provider: "lowbit_server" } });
  });

  it("a fast stream's deltas share frames, and the text is complete and in order", async () => {
    const pieces = Array.from({ length: 400 }, (_, i) => `w${i} `);
    server.enqueue({ kind: "reply", text: pieces });
    const res = await api("POST", "/api/message", { message: "count far", stream: true, task_type: "conversation" });
    const events = sseEvents(res.body);
    const tokens = events.filter((e) => e.event === "token").map((e) => e.data.delta as string);
    expect(tokens.join("")).toBe(pieces.join(""));
    expect(tokens.length).toBeLessThan(pieces.length); // batched: one write per frame, not per delta
    expect(events.at(-1)).toMatchObject({ event: "done", data: { reply: pieces.join("") } });
  });

  it("the first delta of a slow stream is written at once, not held for the next one", async () => {
    server.enqueue({ kind: "reply", text: ["first", " second", " third"], chunkDelayMs: 600 });
    const res = await fetch(`${daemon.url}/api/message`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${daemon.token}` },
      body: JSON.stringify({ message: "slowly", stream: true, task_type: "conversation" }),
    });
    const arrivals: Array<{ delta: string; at: number }> = [];
    const decoder = new TextDecoder();
    let buffered = "";
    for await (const chunk of res.body!) {
      buffered += decoder.decode(chunk as Uint8Array, { stream: true });
      for (let end = buffered.indexOf("\n\n"); end >= 0; end = buffered.indexOf("\n\n")) {
        const [{ event, data } = { event: "", data: {} }] = sseEvents(buffered.slice(0, end + 2));
        buffered = buffered.slice(end + 2);
        if (event === "token") arrivals.push({ delta: data.delta as string, at: performance.now() });
      }
    }
    expect(arrivals.map((a) => a.delta)).toEqual(["first", " second", " third"]);
    // Each delta arrives on its own, about when the model sent it: far sooner than the next one.
    expect(arrivals[1]!.at - arrivals[0]!.at).toBeGreaterThan(450);
    expect(arrivals[2]!.at - arrivals[1]!.at).toBeGreaterThan(450);
  });

  it("answers slash commands without the model", async () => {
    const before = server.requests.length;
    const help = (await api("POST", "/api/message", { message: "/help", wait: true })).json();
    expect(help.reply).toContain("set <CATEGORY> <PROVIDER> <MODEL>");
    expect(help.reply).toContain("/embedded [reload|calibrate]");
    const routes = (await api("POST", "/api/message", { message: "/routes", wait: true })).json();
    expect(routes.reply).toMatch(/conversation\s+lowbit_server\/chat-model/);
    const unknown = (await api("POST", "/api/message", { message: "/nope", wait: true })).json();
    expect(unknown.reply).toContain("Unknown command /nope");
    const embedded = (await api("POST", "/api/message", { message: "/embedded", wait: true })).json();
    expect(embedded.reply).toContain("Embedded model: custom (unloaded)");
    expect(server.requests.length).toBe(before);
  });

  it("/models set changes the route, keeps the file's comments, and applies at once", async () => {
    const set = (
      await api("POST", "/api/message", { message: "/models set conversation lowbit_server better-model", wait: true })
    ).json();
    expect(set.reply).toContain("conversation now uses lowbit_server/better-model");
    const file = readFileSync(join(dataDir, "llm_router.yaml"), "utf8");
    expect(file).toContain("# my router file");
    expect(file).toContain("# my llama.cpp server");
    const routes = (await api("GET", "/api/router/routes")).json();
    const conversation = routes.items.find((r: { category: string }) => r.category === "conversation");
    expect(conversation.primary).toEqual({ provider: "lowbit_server", model: "better-model" });
    expect(conversation.fallback[0]).toEqual({ provider: "lowbit_server", model: "chat-model" });
    await api("POST", "/api/message", { message: "hi", wait: true });
    expect((server.requests.at(-1)!.body as { model: string }).model).toBe("better-model");
    const bad = (
      await api("POST", "/api/message", { message: "/models set conversation nosuch x", wait: true })
    ).json();
    expect(bad.reply).toContain("/models failed");
    expect(readFileSync(join(dataDir, "llm_router.yaml"), "utf8")).toContain("better-model");
  });

  it("refuses bad input with clear errors", async () => {
    const cases: Array<[unknown, number, string]> = [
      [{ wait: true }, 400, "body.message"],
      [{ message: "", wait: true }, 400, "body.message"],
      [{ message: "hi", message_delivery_mode: "later" }, 400, "body.message_delivery_mode"],
      [{ message: "hi", task_id: "t1" }, 400, "message_delivery_mode"],
      [{ message: "hi", message_delivery_mode: "steering" }, 400, "session_id"],
      [{ message: "hi", wait: true, stream: true }, 400, "not both"],
      [{ message: "hi", wait: true, task_type: "../../etc" }, 400, "body.task_type"],
      [{ message: "hi", wait: true, extra: 1 }, 400, "body"],
      [{ message: "x".repeat(100_001), wait: true }, 400, "body.message"],
      ["{not json", 400, ""],
    ];
    for (const [body, status, text] of cases) {
      const res = await api("POST", "/api/message", body);
      expect(res.status, JSON.stringify(body).slice(0, 60)).toBe(status);
      expect(res.json().error.message).toContain(text);
    }
    const unknownSession = await api("POST", "/api/message", { message: "hi", session_id: "nope", wait: true });
    expect(unknownSession.status).toBe(404);
    expect(unknownSession.json().error.code).toBe("not_found");
    expect((await api("POST", "/api/message", { message: "hi", wait: true }, null)).status).toBe(401);
    const idle = (await api("POST", "/api/message", { message: "/status", wait: true })).json().session_id;
    const nothingRuns = await api("POST", "/api/message", {
      message: "hi",
      session_id: idle,
      message_delivery_mode: "follow_up",
    });
    expect(nothingRuns.status).toBe(409);
    expect(nothingRuns.json().error.message).toContain("no task is running");
  });
});

describe("router endpoints", () => {
  it("classifies a message and shows the route it would take", async () => {
    const res = (await api("GET", "/api/router/classify?message=refactor%20this%20python%20function")).json();
    expect(res.category).toBe("code_generation");
    expect(res.route.source).toBe("conversation");
    expect((await api("GET", "/api/router/classify")).status).toBe(400);
  });

  it("reports metrics as JSON and as Prometheus text (token required)", async () => {
    const json = (await api("GET", "/api/router/metrics")).json();
    const model = json.models.find((m: { model: string }) => m.model === "chat-model");
    expect(model.calls).toBeGreaterThanOrEqual(3);
    expect(model.tokens_out).toBeGreaterThan(0);
    const text = await api("GET", "/metrics");
    expect(text.status).toBe(200);
    expect(text.headers["content-type"]).toContain("text/plain");
    expect(text.body).toMatch(/assistant_llm_calls_total\{provider="lowbit_server",model="chat-model"\} \d+/);
    expect((await api("GET", "/metrics", undefined, null)).status).toBe(401);
  });

  it("manages the session budget", async () => {
    const status = (await api("GET", "/api/budget")).json();
    expect(status.limits).toEqual({ max_tokens_per_session: null, max_cost_per_session_usd: null });
    expect(status.sessions.length).toBeGreaterThan(0);
    const set = await api("POST", "/api/budget", { max_tokens_per_session: 1 });
    expect(set.json().sources.max_tokens_per_session).toBe("api");
    const session = status.sessions[0].session_id;
    const refused = await api("POST", "/api/message", { message: "hi", session_id: session, wait: true });
    expect(refused.status).toBe(429);
    expect(refused.json().error.code).toBe("budget_exceeded");
    expect((await api("POST", "/api/budget/reset-session", { session_id: session })).json()).toEqual({ reset: 1 });
    expect(
      (await api("POST", "/api/budget", { max_tokens_per_session: null })).json().limits.max_tokens_per_session,
    ).toBeNull();
    expect((await api("POST", "/api/budget", { max_tokens_per_session: -5 })).status).toBe(400);
    expect((await api("POST", "/api/budget", {})).status).toBe(400);
    expect((await api("POST", "/api/budget/reset-session")).json().reset).toBeGreaterThan(0);
  });

  it("shows the embedded model state; a local model file has nothing to download", async () => {
    const state = (await api("GET", "/api/router/embedded")).json();
    expect(state).toMatchObject({ status: "unloaded", model_id: "custom", file_present: false });
    expect((await api("POST", "/api/router/embedded/reload")).json().status).toBe("unloaded");
    const download = await api("POST", "/api/router/embedded/download");
    expect(download.status).toBe(409);
    expect(download.json().error.message).toContain("ASSISTANT_EMBEDDED_MODEL_PATH");
    expect((await api("GET", "/api/router/embedded/download")).json().status).toBe("idle");
  });

  it("PUT /api/router/routes/:category validates before it writes", async () => {
    const file = join(dataDir, "llm_router.yaml");
    const before = readFileSync(file, "utf8");
    const badProvider = await api("PUT", "/api/router/routes/code_generation", { provider: "nosuch", model: "m" });
    expect(badProvider.status).toBe(400);
    expect(badProvider.json().error.message).toContain("lowbit_server");
    expect((await api("PUT", "/api/router/routes/bad%20name", { provider: "lowbit_server", model: "m" })).status).toBe(
      400,
    );
    expect((await api("PUT", "/api/router/routes/code_generation", { provider: "lowbit_server" })).status).toBe(400);
    expect(readFileSync(file, "utf8")).toBe(before);
    const ok = await api("PUT", "/api/router/routes/code_generation", { provider: "lowbit_server", model: "coder" });
    expect(ok.status).toBe(200);
    expect(ok.json()).toMatchObject({
      category: "code_generation",
      primary: { provider: "lowbit_server", model: "coder" },
    });
    expect(readFileSync(file, "utf8")).toContain("# my router file");
  });

  it("calibration without a model file is a clear 503, not a crash", async () => {
    const res = await api("POST", "/api/router/embedded/calibrate");
    expect(res.status).toBe(503);
    expect(res.json().error.message).toContain("cannot calibrate the embedded model");
  });

  it("/api/status names the embedded state and the providers", async () => {
    const status = (await api("GET", "/api/status")).json();
    expect(status.embedded.model_id).toBe("custom");
    expect(status.embedded.status).toBe("failed"); // the calibration above could not load the missing file
    expect(status.providers).toEqual(expect.arrayContaining(["assistant_embedded", "assistant_core", "lowbit_server"]));
  });
});

describe("assistant chat", () => {
  const env = () => ({ ASSISTANT_DATA_DIR: dataDir });

  it("answers one question as JSON", async () => {
    server.enqueue({ kind: "reply", text: "forty-two" });
    const res = await runCli(["chat", "--json", "what", "is", "the", "answer?"], { env: env() });
    expect(res.code).toBe(0);
    expect(res.json()).toMatchObject({ reply: "forty-two", provider: "lowbit_server" });
  });

  it("streams one answer to stdout", async () => {
    server.enqueue({ kind: "reply", text: ["streamed", " words"] });
    const res = await runCli(["chat", "say", "something"], { env: env() });
    expect(res.code).toBe(0);
    expect(res.stdout).toBe("streamed words\n");
  });

  it("keeps one session across the lines of an interactive chat", async () => {
    server.enqueue({ kind: "reply", text: "first answer" }, { kind: "reply", text: "second answer" });
    const res = await runCli(["chat"], { env: env(), input: "hello\n/metrics\nand again\n" });
    expect(res.code).toBe(0);
    expect(res.stdout).toContain("first answer\n");
    expect(res.stdout).toContain("lowbit_server/");
    expect(res.stdout).toContain("second answer\n");
    const last = server.requests.at(-1)!.body as { messages: unknown[] };
    expect(JSON.stringify(last.messages)).toContain("first answer");
  });

  it("router metrics prints the table and --json", async () => {
    const text = await runCli(["router", "metrics"], { env: env() });
    expect(text.stdout).toMatch(/lowbit_server\/chat-model\s+\d+/);
    const json = (await runCli(["router", "metrics", "--json"], { env: env() })).json();
    expect(json.enabled).toBe(true);
  });

  it("says how to start the daemon when none runs", async () => {
    const res = await runCli(["chat", "hello"], { env: { ASSISTANT_DATA_DIR: tempDataDir() } });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("the daemon is not running");
    expect(res.stderr).toContain("assistant start");
  });
});
