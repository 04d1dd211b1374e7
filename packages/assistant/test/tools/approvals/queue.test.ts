import { describe, expect, it } from "vitest";
import { readSettings } from "../../../src/config/settings.ts";
import { type QueueRequest, ReviewQueue, SUMMARY_STRING_CHARS } from "../../../src/tools/approvals/queue.ts";
import { ConfigError } from "../../../src/util/errors.ts";
import { registerSecret } from "../../../src/util/redact.ts";
import { appError } from "../../config/helpers.ts";
import { manualClock, testStore } from "./helpers.ts";

const CALL: QueueRequest = {
  tool: "run_command",
  arguments: { command: "rm -rf build" },
  task_id: "task-1",
  session_id: "session-1",
  rule: "require_approval: run_command",
};

describe("ReviewQueue state machine", () => {
  it("queues a call as pending with its expiry and emits approval_requested", () => {
    const store = testStore();
    const clock = manualClock();
    const queue = new ReviewQueue(store.db, { events: store.events, now: clock.now });
    const item = queue.request(CALL);
    expect(item).toMatchObject({
      tool: "run_command",
      arguments_summary: JSON.stringify({ command: "rm -rf build" }),
      task_id: "task-1",
      session_id: "session-1",
      rule: "require_approval: run_command",
      status: "pending",
      note: null,
      created_at: "2026-01-10T12:00:00.000Z",
      updated_at: "2026-01-10T12:00:00.000Z",
      expires_at: "2026-01-10T12:15:00.000Z",
      resolved_at: null,
    });
    expect(queue.get(item.id)).toEqual(item);
    const [event] = store.eventsOf("approval_requested");
    expect(event).toMatchObject({
      task_id: "task-1",
      session_id: "session-1",
      data: { id: item.id, tool: "run_command", rule: CALL.rule, expires_at: item.expires_at },
    });
  });

  it("approve, deny and expire are final: acting again is a 409 naming the status", () => {
    const store = testStore();
    const clock = manualClock();
    const queue = new ReviewQueue(store.db, { events: store.events, now: clock.now });
    const a = queue.request(CALL);
    const b = queue.request(CALL);
    const c = queue.request(CALL);
    clock.advance(10);

    expect(queue.approve(a.id, "looks fine")).toMatchObject({
      status: "approved",
      note: "looks fine",
      resolved_at: "2026-01-10T12:00:10.000Z",
      updated_at: "2026-01-10T12:00:10.000Z",
    });
    expect(queue.deny(b.id)).toMatchObject({ status: "denied", note: null });
    expect(queue.expire(c.id, "stale")).toMatchObject({ status: "expired", note: "stale" });

    for (const [id, status] of [
      [a.id, "approved"],
      [b.id, "denied"],
      [c.id, "expired"],
    ] as const) {
      for (const act of [queue.approve, queue.deny, queue.expire]) {
        const error = appError(() => act.call(queue, id, "again"));
        expect(error.code).toBe("conflict");
        expect(error.status).toBe(409);
        expect(error.message).toContain(`already ${status}`);
        expect(error.details).toEqual({ id, status });
      }
      expect(queue.get(id).status).toBe(status); // unchanged by the refused acts
    }

    const resolved = store.eventsOf("approval_resolved").map((e) => e.data);
    expect(resolved).toEqual([
      { id: a.id, tool: "run_command", status: "approved", note: "looks fine", by: "operator" },
      { id: b.id, tool: "run_command", status: "denied", note: null, by: "operator" },
      { id: c.id, tool: "run_command", status: "expired", note: "stale", by: "operator" },
    ]);
  });

  it("unknown ids are 404 and notes over 2000 characters are refused", () => {
    const store = testStore();
    const queue = new ReviewQueue(store.db);
    for (const fn of [() => queue.get("nope"), () => queue.approve("nope"), () => queue.deny("nope")]) {
      expect(appError(fn)).toMatchObject({ code: "not_found", status: 404 });
    }
    const item = queue.request(CALL);
    expect(appError(() => queue.approve(item.id, "x".repeat(2001)))).toMatchObject({ code: "invalid_request" });
    expect(queue.get(item.id).status).toBe("pending");
    expect(queue.approve(item.id, "x".repeat(2000)).note).toHaveLength(2000);
  });

  it("expires pending items lazily once their time is up, and then refuses to approve them", () => {
    const store = testStore();
    const clock = manualClock();
    const queue = new ReviewQueue(store.db, {
      timeoutSecs: 60,
      events: store.events,
      now: clock.now,
    });
    const old = queue.request(CALL);
    clock.advance(30);
    const young = queue.request(CALL);
    clock.advance(30); // old is exactly due, young has 30 s left

    expect(queue.get(old.id)).toMatchObject({ status: "expired", note: null, resolved_at: "2026-01-10T12:01:00.000Z" });
    expect(queue.get(young.id).status).toBe("pending");
    clock.advance(31);
    expect(appError(() => queue.approve(young.id))).toMatchObject({ code: "conflict", details: { status: "expired" } });
    expect(queue.list({ status: "expired" }).items.map((i) => i.id)).toEqual([young.id, old.id]);
    expect(store.eventsOf("approval_resolved").map((e) => e.data)).toEqual([
      { id: old.id, tool: "run_command", status: "expired", note: null, by: "timeout" },
      { id: young.id, tool: "run_command", status: "expired", note: null, by: "timeout" },
    ]);
  });

  it("expiry holds across a restart because expires_at is stored (real clock, 1 s timeout)", async () => {
    let store = testStore();
    const first = new ReviewQueue(store.db, { timeoutSecs: 1, events: store.events });
    const item = first.request(CALL);
    expect(Date.parse(item.expires_at) - Date.parse(item.created_at)).toBe(1000);
    store = store.reopen(); // the daemon stops before anyone decides
    await new Promise((r) => setTimeout(r, 1100));
    const second = new ReviewQueue(store.db, { events: store.events }); // the new default timeout is irrelevant
    expect(second.list().items).toEqual([
      expect.objectContaining({ id: item.id, status: "expired", expires_at: item.expires_at }),
    ]);
    expect(store.eventsOf("approval_resolved").map((e) => e.data)).toEqual([
      { id: item.id, tool: "run_command", status: "expired", note: null, by: "timeout" },
    ]);
  });

  it("the sweep timer expires due items without any read", async () => {
    const store = testStore();
    const clock = manualClock();
    const queue = new ReviewQueue(store.db, { events: store.events, now: clock.now });
    const item = queue.request(CALL);
    queue.startSweep(10);
    try {
      clock.advance(900);
      await expect.poll(() => store.eventsOf("approval_resolved").length, { timeout: 2000 }).toBe(1);
      expect(store.eventsOf("approval_resolved")[0]!.data).toMatchObject({ id: item.id, by: "timeout" });
      expect(
        (store.db.prepare("SELECT status FROM review_queue WHERE id = ?").get(item.id) as { status: string }).status,
      ).toBe("expired");
    } finally {
      queue.stopSweep();
    }
  });

  it("lists newest first with a status filter and cursor pagination", () => {
    const store = testStore();
    const queue = new ReviewQueue(store.db);
    const ids = Array.from({ length: 5 }, (_, i) => queue.request({ ...CALL, tool: `tool_${i}` }).id);
    queue.deny(ids[1]!);
    queue.deny(ids[3]!);

    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = queue.list({ limit: 2, ...(cursor ? { cursor } : {}) });
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((i) => i.id));
      cursor = page.next_cursor ?? undefined;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...ids].reverse());

    const pendingFirst = queue.list({ status: "pending", limit: 2 });
    expect(pendingFirst.items.map((i) => i.id)).toEqual([ids[4], ids[2]]);
    const pendingRest = queue.list({ status: "pending", limit: 2, cursor: pendingFirst.next_cursor! });
    expect(pendingRest).toEqual({ items: [expect.objectContaining({ id: ids[0] })], next_cursor: null });
    expect(queue.list({ status: "denied" }).items.map((i) => i.id)).toEqual([ids[3], ids[1]]);
    expect(queue.list({ status: "approved" })).toEqual({ items: [], next_cursor: null });
    expect(appError(() => queue.list({ cursor: "garbage!" }))).toMatchObject({ code: "invalid_request" });
  });

  it("redacts registered secrets and truncates long values in arguments_summary and in the event", () => {
    const store = testStore();
    const secret = "sk-approval-test-7f3a9c2e5b";
    registerSecret(secret);
    const queue = new ReviewQueue(store.db, { events: store.events });
    const long = "a".repeat(SUMMARY_STRING_CHARS + 300);
    const item = queue.request({
      tool: "web_fetch",
      arguments: { url: `https://example.com/?key=${secret}`, headers: { auth: secret }, body: long, n: 3 },
      rule: "require_approval: web_fetch",
    });
    expect(item.arguments_summary).not.toContain(secret);
    const summary = JSON.parse(item.arguments_summary);
    expect(summary).toEqual({
      url: "https://example.com/?key=[REDACTED]",
      headers: { auth: "[REDACTED]" },
      body: `${"a".repeat(SUMMARY_STRING_CHARS)}… [300 more characters]`,
      n: 3,
    });
    expect(queue.get(item.id).arguments_summary).toBe(item.arguments_summary);
    const stored = store.db.prepare("SELECT arguments_summary FROM review_queue").pluck().get() as string;
    expect(stored).not.toContain(secret);
    expect(JSON.stringify(store.eventsOf("approval_requested"))).not.toContain(secret);
  });
});

describe("ReviewQueue.waitFor", () => {
  it("resolves with the final item when an operator decides", async () => {
    const store = testStore();
    const queue = new ReviewQueue(store.db);
    const item = queue.request(CALL);
    const waiting = queue.waitFor(item.id);
    queue.deny(item.id, "not now");
    await expect(waiting).resolves.toMatchObject({ id: item.id, status: "denied", note: "not now" });
    await expect(queue.waitFor(item.id)).resolves.toMatchObject({ status: "denied" }); // already final
  });

  it("resolves with the expired item when the timeout passes", async () => {
    const store = testStore();
    const queue = new ReviewQueue(store.db, { timeoutSecs: 1 });
    const item = queue.request(CALL);
    const started = Date.now();
    await expect(queue.waitFor(item.id)).resolves.toMatchObject({ id: item.id, status: "expired" });
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it("rejects when the signal aborts, leaving the item pending", async () => {
    const store = testStore();
    const queue = new ReviewQueue(store.db);
    const item = queue.request(CALL);
    const controller = new AbortController();
    const waiting = queue.waitFor(item.id, controller.signal);
    controller.abort(new Error("task cancelled"));
    await expect(waiting).rejects.toThrow("task cancelled");
    expect(queue.get(item.id).status).toBe("pending");
    await expect(queue.waitFor("unknown")).rejects.toMatchObject({ code: "not_found" });
  });
});

describe("ASSISTANT_APPROVAL_TIMEOUT_SECS", () => {
  const timeout = (value?: string) => readSettings({ ASSISTANT_APPROVAL_TIMEOUT_SECS: value }).approvalTimeoutSecs;

  it("defaults to 900 and accepts whole seconds", () => {
    expect(timeout()).toBe(900);
    expect(timeout(" 30 ")).toBe(30);
    expect(new ReviewQueue(testStore().db).timeoutSecs).toBe(900);
  });

  it.each(["0", "-5", "1.5", "abc", "999999999"])("refuses %s with a ConfigError naming the variable", (value) => {
    expect(() => timeout(value)).toThrow(ConfigError);
    expect(() => timeout(value)).toThrow(
      `environment: ASSISTANT_APPROVAL_TIMEOUT_SECS: must be a whole number of seconds from 1 to 2592000 (got "${value}")`,
    );
  });
});
