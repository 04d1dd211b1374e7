import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EventRow, toEvent } from "../../src/events/eventLog.ts";
import { EVENT_KINDS, type EventKind, type StoredEvent, storedEventSchema } from "../../src/events/registry.ts";
import { openDatabase } from "../../src/store/database.ts";
import { agentDataDir, startScriptedDaemon } from "../agent/helpers.ts";
import { api as apiCall, type TestDaemon, tempDataDir, until } from "../helpers/daemon.ts";
import { type ScriptedServer, startOpenAiServer } from "../llm/servers/openaiServer.ts";

// The typed read side against what a real daemon stores and sends: a short session (a task with tool calls, one
// of them approved in the review queue, a memory remembered and forgotten, a schedule that fires, is paused,
// resumed and deleted, a vault secret) and a stop. Every event it emitted, read back from assistant.db, from the
// task's events route and from the SSE stream, must parse against the registry's schema for its kind unchanged.

let server: ScriptedServer;
let daemon: TestDaemon;
let work: string;

const api = (method: string, path: string, body?: unknown) => apiCall(daemon, method, path, body);

beforeAll(async () => {
  server = await startOpenAiServer();
  work = tempDataDir("assistant-events-work-");
  writeFileSync(join(work, "notes.md"), "# Notes\nbuy milk\n");
  daemon = await startScriptedDaemon(agentDataDir(server.url, work), { ASSISTANT_SCHEDULE_MIN_INTERVAL_SECS: "1" });
}, 30_000);

afterAll(async () => {
  await daemon?.stop();
  await server?.close();
});

/** The event as the registry reads it: the stored row decoded, then checked against its kind's schema. */
function parsed(event: unknown): StoredEvent {
  const result = storedEventSchema.safeParse(event);
  if (!result.success) throw new Error(`${JSON.stringify(event)} does not parse: ${result.error.message}`);
  // Nothing stripped or defaulted: the typed view is the whole event as stored and sent.
  expect(result.data).toEqual(event);
  return result.data;
}

/** The stored events sent on GET /api/events from the start, up to `lastId`. */
async function streamed(lastId: number): Promise<unknown[]> {
  const controller = new AbortController();
  const res = await fetch(`${daemon.url}/api/events?last_event_id=0`, {
    headers: { authorization: `Bearer ${daemon.token}` },
    signal: controller.signal,
  });
  const events: unknown[] = [];
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of res.body!) {
    buffer += decoder.decode(chunk, { stream: true });
    let end = buffer.indexOf("\n\n");
    while (end !== -1) {
      const data = buffer
        .slice(0, end)
        .split("\n")
        .find((line) => line.startsWith("data: "));
      buffer = buffer.slice(end + 2);
      end = buffer.indexOf("\n\n");
      if (data) events.push(JSON.parse(data.slice("data: ".length)));
    }
    if (events.some((e) => Number((e as { id: string }).id) >= lastId)) break;
  }
  controller.abort();
  return events;
}

describe("events emitted by the daemon", () => {
  it("every kind of a short real session parses against its registry schema, stored, listed and streamed", async () => {
    expect((await api("PUT", "/api/vault", { key: "demo.token", value: "s3cret-value" })).status).toBe(200);

    server.enqueue(
      { kind: "tool_call", name: "read_file", arguments: { path: join(work, "notes.md") } },
      {
        kind: "tool_call",
        name: "remember",
        arguments: { content: "The user keeps notes in notes.md.", kind: "fact" },
      },
      { kind: "tool_call", name: "write_file", arguments: { path: join(work, "todo.md"), content: "- buy milk\n" } },
      { kind: "reply", text: "Done: read, remembered and written." },
    );
    const started = await api("POST", "/api/message", { message: "Read my notes and write a todo list." });
    expect(started.status, started.body).toBe(202);
    const taskId: string = started.json().task_id;
    const pending = await until(
      () => api("GET", "/api/permissions/queue?status=pending"),
      (r) => r.json().items.length === 1,
    );
    const item = pending.json().items[0];
    expect((await api("POST", `/api/permissions/queue/${item.id}/approve`, {})).status).toBe(200);
    const task = await until(
      () => api("GET", `/api/tasks/${taskId}`),
      (r) => r.json().status === "completed",
    );
    expect(task.json().reply).toBe("Done: read, remembered and written.");

    const memories = await api("GET", "/api/memory/second-brain/search?q=notes");
    const memoryId: string = memories.json().items[0].memory.id;
    expect((await api("DELETE", `/api/memory/second-brain/items/${memoryId}`)).status).toBe(200);
    expect((await api("POST", "/api/memory/second-brain/settings", { learning_enabled: true })).status).toBe(200);
    expect((await api("POST", "/api/memory/second-brain/clear")).status).toBe(200);

    const created = await api("POST", "/api/schedules", {
      name: "pulse",
      description: "Say pulse",
      interval_secs: 1,
      task_type: "conversation",
    });
    expect(created.status, created.body).toBe(201);
    const scheduleId: string = created.json().id;
    await until(
      () => api("GET", "/api/timeline?category=schedule&limit=50"),
      (r) => r.json().items.some((i: { kind: string }) => i.kind === "schedule_fired"),
    );
    expect((await api("POST", `/api/schedules/${scheduleId}/pause`)).status).toBe(200);
    expect((await api("POST", `/api/schedules/${scheduleId}/resume`)).status).toBe(200);
    expect((await api("DELETE", `/api/schedules/${scheduleId}`)).status).toBe(200);

    // The task's events as the CLI reads them, and the whole log as the SSE stream sends it.
    const listed = await api("GET", `/api/tasks/${taskId}/events?limit=500`);
    const taskEvents = listed.json().items.map(parsed);
    expect(taskEvents.map((e: StoredEvent) => e.kind)).toEqual(
      expect.arrayContaining(["task_created", "tool_call_completed", "approval_resolved", "message_delta"]),
    );
    const timeline = await api("GET", "/api/timeline?limit=500");
    for (const { category: _category, title: _title, ...event } of timeline.json().items) parsed(event);

    const db = openDatabase(join(daemon.dataDir, "assistant.db"), { readonly: true });
    const lastSeq = (db.prepare("SELECT MAX(seq) AS seq FROM events").get() as { seq: number }).seq;
    db.close();
    const sent = await streamed(lastSeq);
    expect(sent.length).toBeGreaterThanOrEqual(lastSeq);
    sent.forEach(parsed);

    expect(await daemon.stop()).toBe(0);
    const stopped = openDatabase(join(daemon.dataDir, "assistant.db"), { readonly: true });
    const rows = stopped.prepare("SELECT * FROM events ORDER BY seq").all() as EventRow[];
    stopped.close();
    const stored = rows.map((row) => parsed(toEvent(row)));

    const seen = new Set<EventKind>(stored.map((e) => e.kind));
    const expected: EventKind[] = [
      "daemon_started",
      "daemon_stopping",
      "vault_updated",
      "task_created",
      "task_state_changed",
      "message_delta",
      "tool_call_requested",
      "tool_call_completed",
      "approval_requested",
      "approval_resolved",
      "memory_learned",
      "memory_forgotten",
      "memory_settings_changed",
      "memory_cleared",
      "schedule_created",
      "schedule_fired",
      "schedule_paused",
      "schedule_resumed",
      "schedule_deleted",
    ];
    expect([...seen].sort()).toEqual(expect.arrayContaining(expected));
    for (const kind of seen) expect(Object.keys(EVENT_KINDS)).toContain(kind);

    // The narrowing the read side promises holds on what was stored: statuses are the domains' own values.
    const calls = stored.filter((e) => e.kind === "tool_call_completed");
    expect(calls.map((e) => [e.data.tool, e.data.status])).toEqual([
      ["read_file", "ok"],
      ["remember", "ok"],
      ["write_file", "ok"],
    ]);
    const learned = stored.find((e) => e.kind === "memory_learned");
    expect(learned?.data).toMatchObject({ origin: "tool", kind: "fact", action: "created" });
  }, 60_000);
});
