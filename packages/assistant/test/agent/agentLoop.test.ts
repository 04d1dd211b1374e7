import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api as apiCall, type TestDaemon, tempDataDir, until } from "../helpers/daemon.ts";
import { type ScriptedServer, startOpenAiServer } from "../llm/servers/openaiServer.ts";
import { agentDataDir, startScriptedDaemon } from "./helpers.ts";

// The agent end to end: a real daemon runs tasks against a scripted OpenAI-protocol server that returns chosen
// tool calls. Tools act on a scratch directory allowed by a real tools_policy.yaml.

let server: ScriptedServer;
let daemon: TestDaemon;
let dataDir: string;
let work: string;

const ENV = {
  ASSISTANT_MAX_TOOL_ROUNDS: "4",
  ASSISTANT_MAX_CONTEXT_TOKENS: "600",
};

beforeAll(async () => {
  server = await startOpenAiServer();
  work = tempDataDir("assistant-agent-work-");
  writeFileSync(join(work, "notes.txt"), "The meeting is on Tuesday.");
  dataDir = agentDataDir(server.url, work, {
    conversation: "chat-model",
    system: "system-model",
    default: "chat-model",
  });
  daemon = await startScriptedDaemon(dataDir, ENV);
});
afterAll(async () => {
  await daemon?.stop();
  await server?.close();
});

const api = (method: string, path: string, body?: unknown) => apiCall(daemon, method, path, body, daemon.token);

interface ChatBody {
  model: string;
  messages: Array<{ role: string; content: unknown; tool_calls?: unknown }>;
  tools?: Array<{ function: { name: string } }>;
}
const chatBodies = () =>
  server.requests.filter((r) => r.path.endsWith("/chat/completions")).map((r) => r.body as ChatBody);
const text = (body: ChatBody) => JSON.stringify(body.messages);

const task = async (id: string) => (await api("GET", `/api/tasks/${id}`)).json();
const untilStatus = (id: string, ...statuses: string[]) =>
  until(
    () => task(id),
    (t) => statuses.includes(t.status),
  );

describe("the agent tool loop", () => {
  it("uses tools over several rounds and answers with what they returned", async () => {
    const before = chatBodies().length;
    server.enqueue(
      { kind: "tool_call", name: "read_file", arguments: { path: join(work, "notes.txt") } },
      { kind: "tool_call", name: "list_dir", arguments: { path: work } },
      { kind: "reply", text: "Your meeting is on Tuesday." },
    );
    const res = await api("POST", "/api/message", { message: "When is my meeting? Check my notes.", wait: true });
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({
      status: "completed",
      reply: "Your meeting is on Tuesday.",
      provider: "lowbit_server",
    });
    const bodies = chatBodies().slice(before);
    expect(bodies).toHaveLength(3);
    const offered = bodies[0]!.tools!.map((t) => t.function.name);
    expect(offered).toEqual(expect.arrayContaining(["read_file", "list_dir", "search"]));
    // The other tools are in the tool index (docs/agent.md#how-the-model-sees-tools), reachable with load_tools.
    const system = text({ ...bodies[0]!, messages: bodies[0]!.messages.filter((m) => m.role === "system") });
    expect(offered).toContain("load_tools");
    expect(system).toContain("write_file");
    expect(offered).not.toContain("run_command"); // allowed_commands is empty: never offered
    expect(system).not.toContain("run_command");
    expect(text(bodies[1]!)).toContain("The meeting is on Tuesday.");
    expect(text(bodies[1]!)).toContain("untrusted_data");
    expect(text(bodies[2]!)).toContain("notes.txt");

    const report = (await api("GET", `/api/tasks/${res.json().task_id}/report`)).json();
    expect(Object.keys(report)).toEqual(expect.arrayContaining(["done", "needs_review", "failed", "next_steps"]));
    expect(report.done.map((d: { text: string }) => d.text).join("\n")).toContain("read_file");
    expect(existsSync(join(dataDir, "reports", `${res.json().task_id}.json`))).toBe(true);
    expect(readFileSync(join(dataDir, "reports", `${res.json().task_id}.md`), "utf8")).toContain("## Next steps");
  });

  it("reports a blocked call to the model, which answers accordingly", async () => {
    const before = chatBodies().length;
    server.enqueue(
      { kind: "tool_call", name: "read_file", arguments: { path: "/etc/passwd" } },
      { kind: "reply", text: "I am not allowed to read that file." },
    );
    const res = (await api("POST", "/api/message", { message: "Show /etc/passwd", wait: true })).json();
    expect(res.reply).toBe("I am not allowed to read that file.");
    const second = text(chatBodies()[before + 1]!);
    expect(second).toContain("allowed_read_paths does not cover /etc/passwd");
    expect(second).not.toContain("root:x:0");
    const report = (await api("GET", `/api/tasks/${res.task_id}/report`)).json();
    expect(report.failed[0].text).toMatch(/blocked by allowed_read_paths/);
    expect(report.next_steps[0].text).toMatch(/tools_policy.yaml/);
  });

  it("waits for approval, then resumes; a denial reaches the model with the note", async () => {
    const target = join(work, "todo.txt");
    server.enqueue(
      { kind: "tool_call", name: "write_file", arguments: { path: target, content: "buy milk" } },
      { kind: "reply", text: "Saved your todo." },
    );
    const started = await api("POST", "/api/message", { message: "Save 'buy milk' to todo.txt" });
    expect(started.status).toBe(202);
    const { task_id: taskId } = started.json();
    expect((await untilStatus(taskId, "waiting_approval")).status).toBe("waiting_approval");
    const pending = (await api("GET", "/api/permissions/queue?status=pending")).json().items[0];
    expect(pending).toMatchObject({ tool: "write_file", task_id: taskId });
    await api("POST", `/api/permissions/queue/${pending.id}/approve`);
    expect(await untilStatus(taskId, "completed")).toMatchObject({ status: "completed", reply: "Saved your todo." });
    expect(readFileSync(target, "utf8")).toBe("buy milk");

    const before = chatBodies().length;
    server.enqueue(
      { kind: "tool_call", name: "write_file", arguments: { path: join(work, "other.txt"), content: "x" } },
      { kind: "reply", text: "Understood, I will not write it." },
    );
    const second = (await api("POST", "/api/message", { message: "Write other.txt" })).json();
    await untilStatus(second.task_id, "waiting_approval");
    const item = (await api("GET", "/api/permissions/queue?status=pending")).json().items[0];
    await api("POST", `/api/permissions/queue/${item.id}/deny`, { note: "not in that folder" });
    await untilStatus(second.task_id, "completed");
    const afterDenial = text(chatBodies()[before + 1]!);
    expect(afterDenial).toContain("The user denied this call");
    expect(afterDenial).toContain("not in that folder");
    expect(existsSync(join(work, "other.txt"))).toBe(false);
    const states = (await api("GET", `/api/tasks/${second.task_id}/events`))
      .json()
      .items.filter((e: { kind: string }) => e.kind === "task_state_changed")
      .map((e: { data: { status: string } }) => e.data.status);
    expect(states).toEqual(["running", "waiting_approval", "running", "completed"]);
  });

  it("injects steering after the current turn and runs a follow-up after the unit", async () => {
    server.enqueue(
      { kind: "tool_call", name: "write_file", arguments: { path: join(work, "s.txt"), content: "draft" } },
      { kind: "reply", text: "Done, in French as asked." },
      { kind: "reply", text: "Here is the summary." },
    );
    const started = (await api("POST", "/api/message", { message: "Write a draft to s.txt" })).json();
    await untilStatus(started.task_id, "waiting_approval");
    const steer = await api("POST", "/api/message", {
      message: "Answer in French please",
      session_id: started.session_id,
      message_delivery_mode: "steering",
    });
    expect(steer.status).toBe(202);
    expect(steer.json()).toMatchObject({ task_id: started.task_id, queued: { mode: "steering" } });
    const follow = await api("POST", "/api/message", {
      message: "Then summarise what you did",
      session_id: started.session_id,
      message_delivery_mode: "follow_up",
    });
    expect(follow.status).toBe(202);
    const queue = (await api("GET", `/api/tasks/${started.task_id}/queue`)).json();
    expect(queue.steering).toHaveLength(1);
    expect(queue.follow_up).toHaveLength(1);

    const before = chatBodies().length;
    const item = (await api("GET", "/api/permissions/queue?status=pending")).json().items[0];
    await api("POST", `/api/permissions/queue/${item.id}/approve`);
    const done = await untilStatus(started.task_id, "completed");
    expect(done.reply).toBe("Here is the summary.");
    const [afterTool, followUp] = chatBodies().slice(before);
    expect(text(afterTool!)).toContain("Answer in French please");
    expect(text(followUp!)).toContain("Then summarise what you did");
    const kinds = (await api("GET", `/api/tasks/${started.task_id}/events`))
      .json()
      .items.map((e: { kind: string }) => e.kind);
    for (const kind of [
      "user_steering_queued",
      "user_steering_applied",
      "user_follow_up_queued",
      "user_follow_up_applied",
    ]) {
      expect(kinds).toContain(kind);
    }
    const messages = (await api("GET", `/api/sessions/${started.session_id}/messages`)).json().items;
    expect(messages.map((m: { content: string }) => m.content)).toEqual(
      expect.arrayContaining(["Done, in French as asked.", "Then summarise what you did", "Here is the summary."]),
    );
  });

  it("stops at ASSISTANT_MAX_TOOL_ROUNDS and says so in the reply and the report", async () => {
    const call = { kind: "tool_call" as const, name: "list_dir", arguments: { path: work } };
    server.enqueue(call, call, call, call);
    const res = (await api("POST", "/api/message", { message: "List forever", wait: true })).json();
    expect(res.reply).toContain("limit of 4 tool rounds");
    expect(res).toMatchObject({ status: "completed", reason: "round_limit" });
    const report = (await api("GET", `/api/tasks/${res.task_id}/report`)).json();
    expect(report.needs_review.some((i: { text: string }) => i.text.includes("round limit"))).toBe(true);
  });

  it("parses TOOL: text calls strictly and reports malformed ones to the model", async () => {
    const before = chatBodies().length;
    server.enqueue(
      { kind: "reply", text: `Let me look.\nTOOL: read_file ${join(work, "notes.txt")}\nTOOL: read_file {"path": ` },
      { kind: "reply", text: "Tuesday." },
    );
    const res = (await api("POST", "/api/message", { message: "When?", wait: true })).json();
    expect(res.reply).toBe("Tuesday.");
    const results = text(chatBodies()[before + 1]!);
    expect(results).toContain("The meeting is on Tuesday.");
    expect(results).toContain("Malformed tool call");
  });

  it("cancels a task mid-stream", async () => {
    server.enqueue({ kind: "reply", text: Array.from({ length: 40 }, (_, i) => `w${i} `), chunkDelayMs: 100 });
    const started = (await api("POST", "/api/tasks", { message: "Tell a long story" })).json();
    await untilStatus(started.task_id, "running");
    await new Promise((r) => setTimeout(r, 300));
    const cancelled = await api("POST", `/api/tasks/${started.task_id}/cancel`);
    expect(cancelled.status).toBe(200);
    const done = await untilStatus(started.task_id, "cancelled");
    expect(done).toMatchObject({ status: "cancelled", reason: "cancelled by the user" });
    expect((await api("POST", `/api/tasks/${started.task_id}/cancel`)).status).toBe(409);
  });

  it("compacts long history through the system route and keeps the facts the user gave", async () => {
    const before = chatBodies().length;
    // Every answer (chat turns and the summary alike) carries the fact, as a model that follows the instruction would.
    server.setDefault({ kind: "reply", text: "- The user's locker code is 4711." });
    const first = (await api("POST", "/api/message", { message: "My locker code is 4711.", wait: true })).json();
    const session = first.session_id;
    for (let i = 0; i < 4; i++) {
      await api("POST", "/api/message", {
        message: `Filler message ${i} ${"lorem ipsum ".repeat(40)}`,
        session_id: session,
        wait: true,
      });
    }
    server.setDefault({ kind: "reply", text: "Hello from the test server" });
    server.enqueue({ kind: "reply", text: "It is 4711." });
    const res = (
      await api("POST", "/api/message", { message: "What is my locker code?", session_id: session, wait: true })
    ).json();
    expect(res.reply).toBe("It is 4711.");
    const calls = chatBodies().slice(before);
    const summarise = calls.find((b) => b.model === "system-model");
    expect(summarise && text(summarise)).toContain("My locker code is 4711.");
    const chat = calls.at(-1)!;
    expect(chat.model).toBe("chat-model");
    expect(text(chat)).toContain("Summary of the earlier conversation");
    expect(text(chat)).toContain("locker code is 4711");
    expect(text(chat)).not.toContain("Filler message 0");
  });
});

describe("bad input", () => {
  it("answers unknown ids, final tasks, bad modes and huge messages with clear errors", async () => {
    for (const path of [
      "/api/tasks/nope",
      "/api/tasks/nope/events",
      "/api/tasks/nope/report",
      "/api/tasks/nope/queue",
    ]) {
      const res = await api("GET", path);
      expect(res.status, path).toBe(404);
      expect(res.json().error.code).toBe("not_found");
    }
    expect((await api("POST", "/api/tasks/nope/cancel")).status).toBe(404);
    expect((await api("DELETE", "/api/tasks/nope/queue")).status).toBe(404);
    expect((await api("GET", "/api/tasks?status=sleeping")).status).toBe(400);
    expect((await api("POST", "/api/tasks", {})).status).toBe(400);
    expect((await api("POST", "/api/tasks", { message: "x".repeat(100_001) })).status).toBe(400);
    const unknownSession = await api("POST", "/api/tasks", { message: "hi", session_id: "nope" });
    expect(unknownSession.status).toBe(404);
    const steerNowhere = await api("POST", "/api/message", {
      message: "hi",
      task_id: "nope",
      message_delivery_mode: "steering",
    });
    expect(steerNowhere.status).toBe(404);
    const tasksBefore = (await api("GET", "/api/tasks?limit=500")).json().items.length;
    expect((await api("POST", "/api/message", { message: "hi", message_delivery_mode: "sideways" })).status).toBe(400);
    expect((await api("GET", "/api/tasks?limit=500")).json().items.length).toBe(tasksBefore);
  });
});

describe("a daemon killed mid-task", () => {
  it("fails the running task as interrupted at the next start, runs the queued one, keeps everything else", async () => {
    server.enqueue({ kind: "tool_call", name: "write_file", arguments: { path: join(work, "k.txt"), content: "k" } });
    const running = (await api("POST", "/api/message", { message: "Write k.txt" })).json();
    await untilStatus(running.task_id, "waiting_approval");
    const queued = (
      await api("POST", "/api/tasks", { message: "And then say hi", session_id: running.session_id })
    ).json();
    expect((await task(queued.task_id)).status).toBe("queued");
    const sessionsBefore = (await api("GET", "/api/sessions?limit=500")).json().items.length;

    await daemon.stop("SIGKILL");
    server.enqueue({ kind: "reply", text: "hi" });
    daemon = await startScriptedDaemon(dataDir, ENV);

    const interrupted = await task(running.task_id);
    expect(interrupted).toMatchObject({ status: "failed", reason: "interrupted" });
    const report = (await api("GET", `/api/tasks/${running.task_id}/report`)).json();
    const failed = report.failed.map((i: { text: string }) => i.text).join("\n");
    expect(failed).toMatch(/Interrupted: the daemon stopped/);
    expect(failed).toMatch(/write_file .*k\.txt did not finish/);
    expect(await untilStatus(queued.task_id, "completed")).toMatchObject({ status: "completed", reply: "hi" });
    expect((await api("GET", "/api/sessions?limit=500")).json().items.length).toBe(sessionsBefore);
    const messages = (await api("GET", `/api/sessions/${running.session_id}/messages`)).json().items;
    expect(messages.map((m: { content: string }) => m.content)).toContain("Write k.txt");
  });
});
