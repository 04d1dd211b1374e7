import { writeFileSync } from "node:fs";
import { connect, createServer, type Socket } from "node:net";
import { join } from "node:path";
import { ApiError, AssistantClient, type StoredEvent, sessionCookieOf } from "@assistant/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHAT_CATEGORIES } from "../../src/llm/classify.ts";
import { scriptedRouterYaml, startScriptedDaemon } from "../agent/helpers.ts";
import { type TestDaemon, tempDataDir, until } from "../helpers/daemon.ts";
import { type ScriptedServer, startOpenAiServer } from "../llm/servers/openaiServer.ts";

// The typed client (packages/client) against the real daemon: errors as objects with the daemon's code, message,
// details and status; the session cookie as an alternative to the token; the event stream surviving a dropped
// connection; chat streamed as typed messages. The model is a scripted local server.

const REPLY = "Green tea has less caffeine than coffee.";

let llm: ScriptedServer;
let daemon: TestDaemon;
let client: AssistantClient;

beforeAll(async () => {
  llm = await startOpenAiServer();
  llm.setDefault({ kind: "reply", text: REPLY });
  const dataDir = tempDataDir();
  const routes = Object.fromEntries(CHAT_CATEGORIES.map((category) => [category, "client-model"]));
  writeFileSync(join(dataDir, "llm_router.yaml"), scriptedRouterYaml(llm.url, routes));
  daemon = await startScriptedDaemon(dataDir);
  client = new AssistantClient({ baseUrl: daemon.url, token: daemon.token });
});

afterAll(async () => {
  expect(await daemon.stop()).toBe(0);
  await llm.close();
});

async function failure(call: Promise<unknown> | AsyncGenerator<unknown>): Promise<ApiError> {
  try {
    if (Symbol.asyncIterator in call) await call.next();
    else await call;
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error("the call succeeded");
}

describe("errors", () => {
  it("carry the daemon's code, message, details and the HTTP status", async () => {
    const missing = await failure(client.getTask("no-such-task"));
    expect(missing).toMatchObject({ code: "not_found", status: 404 });
    expect(missing.message).toContain("no-such-task");

    const invalid = await failure(client.listTasks({ limit: 0 }));
    expect(invalid).toMatchObject({ code: "invalid_request", status: 400 });
    expect(invalid.message).toMatch(/^query\.limit: /);
    expect(invalid.details).toMatchObject({ field: "query.limit" });

    const anonymous = await failure(new AssistantClient({ baseUrl: daemon.url }).getStatus());
    expect(anonymous).toMatchObject({ code: "unauthorized", status: 401 });

    const refused = await failure(client.events({ kinds: ["no_such_kind"] }));
    expect(refused).toMatchObject({ code: "invalid_request", status: 400 });
    expect(refused.message).toContain("no_such_kind");
  });

  it("say `unreachable` (status 0) when no daemon answers, and `timed out` when it answers too late", async () => {
    const closed = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, "127.0.0.1", () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const nobody = new AssistantClient({ baseUrl: `http://127.0.0.1:${closed}`, token: "t" });
    expect(await failure(nobody.getStatus())).toMatchObject({ code: "unreachable", status: 0 });
    expect(await failure(nobody.events())).toMatchObject({ code: "unreachable", status: 0 });

    // A model that takes 600 ms: a 100 ms call gives up, a call that waits for the task has no timeout.
    llm.enqueue({ kind: "reply", text: ["slow ", "but ", "there"], chunkDelayMs: 300 });
    const hasty = new AssistantClient({ baseUrl: daemon.url, token: daemon.token, timeoutMs: 100 });
    const late = await failure(hasty.createTask({ message: "Take your time", wait: true }, { timeoutMs: 100 }));
    expect(late).toMatchObject({ code: "unreachable", status: 0 });
    expect(late.message).toContain("timed out");
    llm.enqueue({ kind: "reply", text: ["slow ", "but ", "there"], chunkDelayMs: 300 });
    const reply = await hasty.sendMessage({ message: "Take your time", wait: true });
    expect(reply).toMatchObject({ reply: "slow but there" });
  });
});

describe("authentication", () => {
  it("works with the session cookie of a one-time login code instead of the token", async () => {
    const { code } = await client.createLoginCode();
    const login = await new AssistantClient({ baseUrl: daemon.url }).login({ code });
    expect(login.status).toBe(303);
    const session = sessionCookieOf(login.headers);
    expect(session).toMatch(/^\S{20,}$/);
    const browser = new AssistantClient({ baseUrl: daemon.url, session: session! });
    expect(await browser.getStatus()).toMatchObject({ status: "ok", pid: daemon.process.pid });
    // The code works once; a wrong session is refused like a wrong token.
    expect(await failure(browser.login({ code }))).toMatchObject({ status: 401 });
    const forged = new AssistantClient({ baseUrl: daemon.url, session: "forged" });
    expect(await failure(forged.getStatus())).toMatchObject({ code: "unauthorized", status: 401 });
  });
});

/** A TCP proxy to the daemon that can drop every connection and refuse new ones, like a network going away. */
async function startProxy(port: number) {
  const sockets = new Set<Socket>();
  const requests: string[] = [];
  let down = false;
  const server = createServer((socket) => {
    if (down) return socket.destroy();
    const upstream = connect(port, "127.0.0.1");
    socket.once("data", (chunk) => requests.push(chunk.toString("latin1")));
    socket.pipe(upstream).pipe(socket);
    const drop = () => {
      socket.destroy();
      upstream.destroy();
    };
    for (const end of [socket, upstream]) {
      sockets.add(end);
      end.on("error", drop).on("close", () => {
        sockets.delete(end);
        drop();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    requests,
    /** Drops every open connection and refuses new ones until `restore`. */
    cut() {
      down = true;
      for (const socket of sockets) socket.destroy();
    },
    restore() {
      down = false;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe("the event stream", () => {
  it("reconnects after a dropped connection and resumes after the last event: none lost, none repeated", async () => {
    const proxy = await startProxy(daemon.port);
    const through = new AssistantClient({ baseUrl: proxy.url, token: daemon.token });
    const controller = new AbortController();
    const seen: StoredEvent[] = [];
    const reading = (async () => {
      for await (const event of through.events({ kinds: ["vault_updated"], signal: controller.signal, retryMs: 100 })) {
        seen.push(event);
      }
    })();
    const set = async (keys: string[]) => {
      for (const key of keys) await client.setVaultSecret({ key, value: "v" });
    };
    const keys = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `resume_${from + i}`);
    await until(
      async () => proxy.requests.length,
      (n) => n > 0,
    );
    await set(keys(0, 5));
    await until(
      async () => seen.length,
      (n) => n >= 5,
    );
    const lastBefore = seen.at(-1)!.id;

    proxy.cut(); // mid-stream: the events below are written while the client has no connection
    await set(keys(5, 10));
    proxy.restore();
    await until(
      async () => seen.length,
      (n) => n >= 10,
    );
    await set(keys(10, 12));
    await until(
      async () => seen.length,
      (n) => n >= 12,
    );
    controller.abort();
    await reading;
    await proxy.close();

    const names = seen.map((event) => (event.kind === "vault_updated" ? event.data.key : event.kind));
    expect(names).toEqual(keys(0, 12));
    const ids = seen.map((event) => Number(event.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
    // The reconnection asked for what came after the last event it had.
    const resumed = proxy.requests.filter((request) => request.startsWith("GET /api/events"));
    expect(resumed.length).toBeGreaterThanOrEqual(2);
    expect(resumed.at(-1)).toMatch(new RegExp(`\\r\\nlast-event-id: ${lastBefore}\\r\\n`, "i"));
  });
});

describe("streamed chat", () => {
  it("POST /api/message with stream: true yields typed messages from start to done", async () => {
    const messages = [];
    for await (const message of client.sendMessageStream({ message: "Is green tea strong?" })) messages.push(message);
    expect(messages[0]!.event).toBe("start");
    const tokens = messages.flatMap((m) => (m.event === "token" ? [m.data.delta] : []));
    expect(tokens.join("")).toBe(REPLY);
    const done = messages.at(-1)!;
    expect(done.event).toBe("done");
    if (done.event !== "done" || "command" in done.data) throw new Error("expected a task's reply");
    expect(done.data).toMatchObject({ status: "completed", reply: REPLY });
    expect(messages[0]!.event === "start" && messages[0]!.data.session_id).toBe(done.data.session_id);
  });

  it("POST /v1/chat/completions with stream: true yields chunks, then [DONE]", async () => {
    const messages = [];
    const body = { model: "assistant", messages: [{ role: "user" as const, content: "Is green tea strong?" }] };
    for await (const message of client.createChatCompletionStream(body)) messages.push(message.data);
    expect(messages.at(-1)).toBe("[DONE]");
    const chunks = messages.flatMap((data) => (typeof data === "object" && "choices" in data ? [data] : []));
    expect(chunks.every((chunk) => chunk.object === "chat.completion.chunk")).toBe(true);
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("")).toBe(REPLY);
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe("stop");
  });
});
