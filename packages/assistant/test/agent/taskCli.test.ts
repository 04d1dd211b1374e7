import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatEvent } from "../../src/cli/task.ts";
import { api as apiCall, type TestDaemon, tempDataDir } from "../helpers/daemon.ts";
import { type ScriptedServer, startOpenAiServer } from "../llm/servers/openaiServer.ts";
import { runCli } from "../setup/helpers.ts";
import { agentDataDir, startScriptedDaemon } from "./helpers.ts";

// `assistant task ...` end to end: a real daemon runs tasks against the scripted OpenAI server; the CLI lists,
// shows, watches, cancels and reports them and reads or clears their message queue.

let server: ScriptedServer;
let daemon: TestDaemon;
let dataDir: string;
let work: string;

beforeAll(async () => {
  server = await startOpenAiServer();
  work = tempDataDir("assistant-task-work-");
  mkdirSync(join(work, "files"));
  writeFileSync(join(work, "files", "note.txt"), "hi from the note");
  dataDir = agentDataDir(server.url, work);
  daemon = await startScriptedDaemon(dataDir);
});
afterAll(async () => {
  await daemon?.stop();
  await server?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  if (work) rmSync(work, { recursive: true, force: true });
});

const api = (method: string, path: string, body?: unknown) => apiCall(daemon, method, path, body);
const task = (...args: string[]) => runCli(["task", ...args], { env: { ASSISTANT_DATA_DIR: dataDir } });

async function statusOf(id: string): Promise<string> {
  return (await api("GET", `/api/tasks/${id}`)).json().status;
}

async function waitForStatus(id: string, wanted: string[]): Promise<string> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const status = await statusOf(id);
    if (wanted.includes(status)) return status;
    if (Date.now() > deadline) throw new Error(`task ${id} stayed ${status}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("a finished task", () => {
  let id: string;
  beforeAll(async () => {
    server.enqueue({ kind: "reply", text: "Hello there, from the scripted model." });
    const res = await api("POST", "/api/tasks", { message: "say hello", task_type: "conversation", wait: true });
    expect(res.status).toBe(200);
    id = res.json().id;
    expect(res.json().status).toBe("completed");
  });

  it("task list shows it, --json gives the records, --status filters and is validated", async () => {
    const list = await task("list");
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout.split("\n")[0]).toMatch(/^ID\s+STATUS\s+CREATED\s+MESSAGE$/);
    expect(list.stdout).toMatch(new RegExp(`^${id.slice(0, 8)}\\s+completed\\s+\\S+\\s+say hello`, "m"));
    expect(list.stdout).not.toContain(id); // the short prefix only
    const json = await task("list", "--json");
    expect(json.json().find((t: { id: string }) => t.id === id)).toMatchObject({ status: "completed" });
    const failed = await task("list", "--status", "failed");
    expect(failed.stdout).not.toContain(id);
    const bad = await task("list", "--status", "done");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("option '--status <status>' argument 'done' is invalid. expected one of queued");
  });

  it("task show prints the status and the reply; --json the record", async () => {
    const show = await task("show", id.slice(0, 8)); // the prefix `task list` shows
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain("status    completed");
    expect(show.stdout).toContain("lowbit_server/chat-model");
    expect(show.stdout).toContain("Hello there, from the scripted model.");
    expect((await task("show", id, "--json")).json()).toMatchObject({
      id,
      reply: "Hello there, from the scripted model.",
    });
    const missing = await task("show", "no-such-task");
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no task id starts with "no-such-task"');
  });

  it("task events prints one line per event; --limit and --json", async () => {
    const events = await task("events", id);
    expect(events.code, events.stderr).toBe(0);
    const lines = events.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d created \(api, conversation\): say hello$/);
    expect(lines).toContainEqual(expect.stringMatching(/^\d\d:\d\d:\d\d running$/));
    expect(lines).toContainEqual(
      expect.stringMatching(/^\d\d:\d\d:\d\d message_delta round 1: Hello there, from the scripted model\.$/),
    );
    expect(lines.at(-1)).toMatch(/completed$/);
    const json = (await task("events", id, "--json")).json();
    expect(json).toMatchObject({ task_id: id, status: "completed" });
    expect(json.items.map((e: { kind: string }) => e.kind)).toContain("message_delta");
    const one = (await task("events", id, "--limit", "1", "--json")).json();
    expect(one.items).toHaveLength(1);
    expect((await task("events", id, "--limit", "0")).code).toBe(2);
  });

  it("task report prints the report sections; --json the report", async () => {
    const report = await task("report", id);
    expect(report.code, report.stderr).toBe(0);
    expect(report.stdout).toContain(`# Task ${id}`);
    for (const section of ["## Done", "## Needs review", "## Failed", "## Next steps"]) {
      expect(report.stdout).toContain(section);
    }
    const json = (await task("report", id, "--json")).json();
    expect(json).toMatchObject({ task_id: id, status: "completed" });
    expect(Array.isArray(json.done) && Array.isArray(json.next_steps)).toBe(true);
  });

  it("task cancel refuses a finished task", async () => {
    const cancel = await task("cancel", id);
    expect(cancel.code).toBe(1);
    expect(cancel.stderr).toContain("already completed");
  });

  it("task watch of a finished task prints its events, the status and the reply, and exits 0", async () => {
    const watch = await task("watch", id, "--interval-ms", "50");
    expect(watch.code, watch.stderr).toBe(0);
    expect(watch.stdout).toContain(`watching task ${id}`);
    expect(watch.stdout).toMatch(/message_delta round 1: Hello there/);
    expect(watch.stdout).toContain(`task ${id} completed\nHello there, from the scripted model.\n`);
  });
});

describe("task watch", () => {
  it("follows a running task through a tool call to its reply and exits 0", async () => {
    server.enqueue(
      { kind: "tool_call", name: "read_file", arguments: { path: join(work, "files", "note.txt") } },
      { kind: "reply", text: ["The note ", "says hi."], chunkDelayMs: 150 },
    );
    const created = await api("POST", "/api/tasks", { message: "read my note", task_type: "conversation" });
    expect(created.status).toBe(202);
    const id = created.json().task_id;
    const watch = await task("watch", id, "--interval-ms", "50");
    expect(watch.code, watch.stderr).toBe(0);
    expect(watch.stdout).toMatch(/\d\d:\d\d:\d\d tool_call read_file .*note\.txt/);
    expect(watch.stdout).toMatch(/tool_call_completed read_file ok/);
    expect(watch.stdout).toMatch(/message_delta round 2: The note says hi\./);
    expect(watch.stdout.trimEnd().endsWith(`task ${id} completed\nThe note says hi.`)).toBe(true);
  });

  it("fails clearly for an unknown task", async () => {
    const watch = await task("watch", "no-such-task");
    expect(watch.code).toBe(1);
    expect(watch.stderr).toContain('no task id starts with "no-such-task"');
    expect(watch.stdout).toBe("");
    const unknown = await task("show", "00000000-0000-4000-8000-000000000000"); // a full id goes to the daemon as is
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("no task with id 00000000-0000-4000-8000-000000000000");
  });

  it("refuses a bad --interval-ms", async () => {
    for (const value of ["10", "60001", "abc", "1.5", "-5"]) {
      const watch = await task("watch", "any-task", `--interval-ms=${value}`);
      expect(watch.code, value).toBe(2);
      expect(watch.stderr, value).toContain("expected a whole number from 50 to 60000");
    }
  });
});

describe("a running task", () => {
  it("queue list and clear show and drop its follow-ups; cancel stops it; watch then exits 1", async () => {
    server.enqueue({ kind: "hang" });
    const created = await api("POST", "/api/tasks", { message: "think for a long time", task_type: "conversation" });
    const { task_id: id, session_id: sessionId } = created.json();
    await waitForStatus(id, ["running"]);

    const queued = await api("POST", "/api/message", {
      message: "and then summarise it",
      session_id: sessionId,
      message_delivery_mode: "follow_up",
    });
    expect(queued.status).toBe(202);
    const list = await task("queue", "list", id);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/follow_up\s+\S+\s+and then summarise it/);
    const json = (await task("queue", "list", id, "--json")).json();
    expect(json.follow_up.map((m: { text: string }) => m.text)).toEqual(["and then summarise it"]);
    expect(json.steering).toEqual([]);
    const clear = await task("queue", "clear", id);
    expect(clear.stdout.trim()).toBe(`cleared 1 queued message of task ${id}`);
    expect((await task("queue", "clear", id, "--json")).json()).toEqual({ task_id: id, cleared: 0 });
    expect((await task("queue", "list", id)).stdout.trim()).toBe(`no queued messages for task ${id}`);

    const report = await task("report", id);
    expect(report.code).toBe(1);
    expect(report.stderr).toContain("its report is written when it ends");

    const cancel = await task("cancel", id);
    expect(cancel.code, cancel.stderr).toBe(0);
    expect(cancel.stdout).toMatch(new RegExp(`^${id} (cancelled|is being cancelled)`));
    expect(await waitForStatus(id, ["cancelled", "failed", "completed"])).toBe("cancelled");

    const watch = await task("watch", id, "--interval-ms", "50");
    expect(watch.code).toBe(1);
    expect(watch.stdout).toContain(`task ${id} cancelled (cancelled by the user)`);
    expect(watch.stderr).toContain(`task ${id} cancelled`);
    const again = await task("cancel", id, "--json");
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("already cancelled");
  });
});

describe("formatEvent", () => {
  const at = (kind: string, data: Record<string, unknown>) =>
    formatEvent({ id: "1", kind, ts: "2030-01-02T03:04:05.000Z", data } as never).replace(/^\S+ /, "");
  it("writes one readable line per kind", () => {
    expect(at("approval_requested", { id: "q1", tool: "write_file", rule: "r" })).toBe(
      "approval_requested write_file (queue item q1)",
    );
    expect(at("message_delta", { round: 1, text: `${"x".repeat(150)}\nmore` })).toBe(
      `message_delta round 1: ${"x".repeat(100)}...`,
    );
    expect(at("message_delta", { round: 2, text: "" })).toBe("message_delta round 2: (no text)");
    expect(at("tool_call_completed", { tool: "read_file", status: "ok", rule: null })).toBe(
      "tool_call_completed read_file ok",
    );
    expect(at("task_state_changed", { status: "failed", reason: "boom" })).toBe("failed (boom)");
  });
});
