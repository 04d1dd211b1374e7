import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { openDatabase } from "../../src/store/database.ts";
import { agentDataDir } from "../agent/helpers.ts";
import { api as apiCall, startDaemon, type TestDaemon, tempDataDir, until } from "../helpers/daemon.ts";
import { type ScriptedServer, startOpenAiServer } from "../llm/servers/openaiServer.ts";
import { runCli } from "../setup/helpers.ts";

// The second brain through a real daemon: learning after replies (the model is the scripted OpenAI-protocol
// server, chat and `system` routes told apart by model name), recall in a new session, pause, clear, the memory
// tools through the policy, the timeline, and bad input.

let server: ScriptedServer;
let daemon: TestDaemon;

// biome-ignore lint/suspicious/noExplicitAny: tests read response bodies loosely
async function api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await apiCall(daemon, method, path, body);
  return { status: response.status, body: response.json() };
}

const modelOf = (r: { body: unknown }) => (r.body as { model?: string } | undefined)?.model;
const systemCalls = () => server.requests.filter((r) => modelOf(r) === "system-model");
const chatCalls = () => server.requests.filter((r) => modelOf(r) === "chat-model");
const extraction = (...memories: Array<Record<string, string>>) => ({
  kind: "reply" as const,
  text: JSON.stringify({ memories }),
});

beforeAll(async () => {
  server = await startOpenAiServer();
  const work = tempDataDir("assistant-memory-work-");
  const dataDir = agentDataDir(server.url, work, { conversation: "chat-model", system: "system-model" });
  writeFileSync(
    join(dataDir, "tools_policy.yaml"),
    stringify({ allowed_read_paths: [work], require_approval: ["forget"] }),
  );
  // Learning waits for a quiet spell in the session (20 s by default): a short one keeps the test quick.
  daemon = await startDaemon(
    { ASSISTANT_MEMORY_EMBEDDINGS: "lowbit_server:embed-model", ASSISTANT_MEMORY_LEARN_IDLE_SECS: "0.2" },
    dataDir,
  );
}, 30_000);

afterAll(async () => {
  await daemon?.stop();
  await server?.close();
});

describe("second brain through the daemon", () => {
  it("recalls in a new session a fact stated in another one", async () => {
    server.enqueue(
      { kind: "reply", text: "Noted, I will remember that." },
      extraction({ kind: "person", subject: "Alice", content: "Alice is the user's sister; she lives in Lyon." }),
    );
    const first = await api("POST", "/api/message", { message: "My sister Alice lives in Lyon.", wait: true });
    expect(first.status).toBe(200);
    expect(first.body.reply).toBe("Noted, I will remember that.");

    const overview = await until(
      () => api("GET", "/api/memory/second-brain/overview"),
      (r) => r.body.total === 1 && r.body.vectors.embedded === 1,
    );
    expect(overview.body).toMatchObject({ learning_enabled: true, total: 1, by_kind: { person: 1 } });
    expect(overview.body.recent[0]).toMatchObject({
      kind: "person",
      origin: "learning",
      source: { session_id: first.body.session_id, task_id: first.body.task_id },
    });
    expect(overview.body.vectors).toMatchObject({ embedder: "lowbit_server:embed-model", dims: 64, pending: 0 });
    expect(JSON.stringify(systemCalls().at(-1)!.body)).toContain("My sister Alice lives in Lyon.");

    server.enqueue({ kind: "reply", text: "In Lyon." });
    const second = await api("POST", "/api/message", { message: "Where does my sister live?", wait: true });
    expect(second.body.session_id).not.toBe(first.body.session_id);
    const prompt = JSON.stringify(chatCalls().at(-1)!.body);
    expect(prompt).toContain("Alice is the user's sister; she lives in Lyon.");
    expect(prompt).toContain("What you remember from earlier conversations");

    // The second turn is learned from too (nothing durable in it).
    await until(
      () => Promise.resolve(systemCalls().length),
      (n) => n === 2,
    );
    const search = await api("GET", "/api/memory/second-brain/search?q=sister%20Lyon");
    expect(search.body.items[0].memory.content).toContain("Lyon");
    expect(search.body.items[0].matched).toEqual(expect.arrayContaining(["text", "vector"]));

    const db = openDatabase(join(daemon.dataDir, "assistant.db"), { readonly: true });
    const learned = db.prepare("SELECT data FROM events WHERE kind = 'memory_learned'").all() as Array<{
      data: string;
    }>;
    db.close();
    expect(learned.map((r) => JSON.parse(r.data))).toEqual([
      expect.objectContaining({ action: "created", kind: "person", origin: "learning" }),
    ]);
  });

  it("pausing learning stops extraction until it is enabled again", async () => {
    const paused = await api("POST", "/api/memory/second-brain/settings", { learning_enabled: false });
    expect(paused.status).toBe(200);
    expect(paused.body.learning_enabled).toBe(false);
    expect((await api("GET", "/api/memory/second-brain/settings")).body).toMatchObject({
      learning_enabled: false,
      embeddings: { configured: "lowbit_server:embed-model", status: "vectors" },
    });
    const calls = systemCalls().length;
    await api("POST", "/api/message", { message: "My bank PIN is 9876.", wait: true });
    await new Promise((r) => setTimeout(r, 400));
    expect(systemCalls().length).toBe(calls);
    expect((await api("GET", "/api/memory/second-brain/overview")).body.total).toBe(1);

    await api("POST", "/api/memory/second-brain/settings", { learning_enabled: true });
    server.enqueue({ kind: "reply", text: "Good to know." }, extraction());
    await api("POST", "/api/message", { message: "I work as a nurse.", wait: true });
    await until(
      () => Promise.resolve(systemCalls().length),
      (n) => n > calls,
    );
    expect(JSON.stringify(systemCalls().at(-1)!.body)).not.toContain("9876");
  });

  it("the memory tools pass the policy like every tool", async () => {
    const remembered = await api("POST", "/api/tools/remember/invoke", {
      content: "The user's dentist is Dr Martin.",
      kind: "person",
      subject: "Dr Martin",
    });
    expect(remembered.status).toBe(200);
    expect(remembered.body.result).toMatchObject({ status: "ok", output: expect.stringMatching(/^Remembered mem_/) });
    const recalled = await api("POST", "/api/tools/recall/invoke", { query: "dentist" });
    expect(recalled.body.result.output).toContain("Dr Martin");
    const id = /mem_\w+/.exec(remembered.body.result.output)![0];
    // forget is in require_approval: it waits in the review queue.
    const forget = await api("POST", "/api/tools/forget/invoke", { id });
    expect(forget.status).toBe(202);
    expect(forget.body.queue_item_id).toBeTruthy();
    const removed = await api("DELETE", `/api/memory/second-brain/items/${id}`);
    expect(removed.body.removed.id).toBe(id);
  });

  it("clear empties memory and the timeline shows what happened", async () => {
    const stored = await api("POST", "/api/memory/second-brain/items", { content: "The user owns a red bicycle." });
    expect(stored.status).toBe(201);
    const cleared = await api("POST", "/api/memory/second-brain/clear");
    expect(cleared.body.removed).toBeGreaterThanOrEqual(2);
    expect((await api("GET", "/api/memory/second-brain/overview")).body).toMatchObject({ total: 0, recent: [] });
    expect((await api("GET", "/api/memory/second-brain/search?q=bicycle")).body.items).toEqual([]);

    const timeline = await api("GET", "/api/timeline?limit=500");
    const kinds = timeline.body.items.map((i: { kind: string }) => i.kind);
    expect(kinds[0]).toBe("memory_cleared");
    expect(kinds).toEqual(
      expect.arrayContaining(["task_created", "task_state_changed", "memory_learned", "memory_settings_changed"]),
    );
    expect(timeline.body.items[0]).toMatchObject({
      category: "memory",
      title: expect.stringContaining("Memory cleared"),
    });

    const memoryOnly = await api("GET", "/api/timeline?category=memory&limit=2");
    expect(memoryOnly.body.items).toHaveLength(2);
    expect(memoryOnly.body.items.every((i: { category: string }) => i.category === "memory")).toBe(true);
    const next = await api("GET", `/api/timeline?category=memory&limit=2&cursor=${memoryOnly.body.next_cursor}`);
    expect(Number(next.body.items[0].id)).toBeLessThan(Number(memoryOnly.body.items[1].id));

    const future = await api("GET", "/api/timeline?since=2999-01-01T00:00:00Z");
    expect(future.body.items).toEqual([]);
    const since = await api("GET", `/api/timeline?since=${encodeURIComponent(timeline.body.items[0].ts)}`);
    expect(since.body.items[0].kind).toBe("memory_cleared");
  });

  it("the memory CLI remembers, searches, shows, forgets, pauses, resumes and clears", async () => {
    const cli = (...args: string[]) => runCli(["memory", ...args], { env: { ASSISTANT_DATA_DIR: daemon.dataDir } });
    const stored = await cli(
      "remember",
      "The user's bike lock code is 4312.",
      "--kind",
      "fact",
      "--subject",
      "bike lock",
      "--json",
    );
    expect(stored.code).toBe(0);
    const record = stored.json().memory;
    expect(record).toMatchObject({ kind: "fact", subject: "bike lock", origin: "tool" });
    const human = await cli("remember", "The user's bike lock code is 9876.", "--subject", "bike lock");
    expect(human.stdout).toMatch(/^Updated:\nmem_\w+ {2}fact \[bike lock\]/);

    const found = await cli("search", "bike", "lock", "code", "--json");
    expect(found.json().items[0].memory).toMatchObject({
      id: record.id,
      content: "The user's bike lock code is 9876.",
    });
    expect((await cli("search", "bike", "lock")).stdout).toContain("matched: text");
    expect((await cli("search", "bike", "lock", "--kind", "decision")).stdout).toBe("No memory matches.\n");

    const overview = await cli("overview");
    expect(overview.stdout).toMatch(/^Learning: (on|paused).*\nMemories: \d+ \(fact \d+/);
    expect(overview.stdout).toContain("bike lock code is 9876");
    expect((await cli("overview", "--recent", "0", "--json")).json()).toMatchObject({ recent: [] });

    expect((await cli("pause")).stdout).toContain("Learning: paused");
    expect((await cli("settings", "--json")).json()).toMatchObject({ learning_enabled: false });
    expect((await cli("resume")).stdout).toContain("Learning: on");

    const forgotten = await cli("forget", record.id);
    expect(forgotten.stdout).toBe(`Forgot ${record.id}: The user's bike lock code is 9876.\n`);
    const again = await cli("forget", record.id);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/not forgotten.*not_found|not_found.*not forgotten|no memory/i);

    await cli("remember", "The user collects stamps.");
    const refused = await cli("clear");
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("--yes");
    expect((await cli("overview", "--json")).json().total).toBeGreaterThan(0);
    const cleared = await cli("clear", "--yes", "--json");
    expect(cleared.json().removed).toBeGreaterThan(0);
    expect((await cli("overview", "--json")).json().total).toBe(0);
    const badKind = await cli("search", "stamps", "--kind", "hobby");
    expect(badKind.code).not.toBe(0);
    expect(badKind.stderr).toContain("kind");
  });

  it("answers bad input with clear errors", async () => {
    const cases: Array<[string, string, unknown, number, string?]> = [
      ["POST", "/api/memory/second-brain/settings", { learning_enabled: "yes" }, 400, "learning_enabled"],
      ["POST", "/api/memory/second-brain/settings", {}, 400, "learning_enabled"],
      ["POST", "/api/memory/second-brain/settings", { learning_enabled: true, extra: 1 }, 400],
      ["GET", "/api/memory/second-brain/search", undefined, 400, "q"],
      ["GET", "/api/memory/second-brain/search?q=x&limit=0", undefined, 400, "limit"],
      ["GET", "/api/memory/second-brain/overview?recent=-1", undefined, 400, "recent"],
      ["POST", "/api/memory/second-brain/items", { content: "" }, 400, "content"],
      ["POST", "/api/memory/second-brain/items", { content: "Some fact here", kind: "opinion" }, 400, "kind"],
      ["POST", "/api/memory/second-brain/items", { content: "x".repeat(1001) }, 400, "content"],
      ["DELETE", "/api/memory/second-brain/items/mem_missing", undefined, 404],
      ["GET", "/api/timeline?since=yesterday", undefined, 400, "since"],
      ["GET", "/api/timeline?since=2026-02-30T00:00:00Z", undefined, 400, "since"],
      ["GET", "/api/timeline?limit=501", undefined, 400, "limit"],
      ["GET", "/api/timeline?category=weather", undefined, 400, "category"],
      ["GET", "/api/timeline?cursor=garbage", undefined, 400, "cursor"],
    ];
    for (const [method, path, body, status, field] of cases) {
      const response = await api(method, path, body);
      expect({ path, status: response.status }).toEqual({ path, status });
      expect(response.body.error.message).toBeTruthy();
      if (field) expect(JSON.stringify(response.body.error.details ?? {})).toContain(field);
    }
  });
});
