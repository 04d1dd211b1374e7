import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SessionStore } from "../../src/agent/sessions.ts";
import type { SubmitRequest } from "../../src/agent/taskService.ts";
import { type TaskRecord, TaskStore } from "../../src/agent/tasks.ts";
import { readSettings } from "../../src/config/settings.ts";
import { EventLog } from "../../src/events/eventLog.ts";
import { Budget } from "../../src/llm/budget.ts";
import { MAX_TIMER_MS, Scheduler } from "../../src/scheduler/scheduler.ts";
import { type Db, openDatabase } from "../../src/store/database.ts";
import { MIGRATIONS } from "../../src/store/migrations.ts";
import { AppError } from "../../src/util/errors.ts";

// The scheduler over a real SQLite file with a real session store, budget and event log; the clock, the timers
// and the task service (submit records a real queued task, wait is settled by the test) are fakes the test drives.

const T0 = Date.parse("2030-01-01T00:00:00.000Z");
const iso = (ms: number) => new Date(ms).toISOString();

interface Harness {
  db: Db;
  scheduler: Scheduler;
  tasks: TaskStore;
  submitted: SubmitRequest[];
  timers: Array<{ fn: () => void; ms: number; cleared: boolean }>;
  /** The next submit throws this (then submits work again). */
  refuseNext(error: Error): void;
  /** Ends a run: the task becomes final and its waiter settles (rejects with `error` when given). */
  finish(taskId: string, error?: AppError): Promise<void>;
  events(kind: string): Array<Record<string, unknown>>;
}

let dir: string;
let now: number;
const open: Db[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "assistant-scheduler-"));
  now = T0;
});
afterEach(() => {
  for (const db of open.splice(0)) db.close();
  rmSync(dir, { recursive: true, force: true });
});

function harness(env: NodeJS.ProcessEnv = {}): Harness {
  const db = openDatabase(join(dir, "assistant.db"));
  open.push(db);
  const tasks = new TaskStore(db);
  const sessions = new SessionStore(db);
  const events = new EventLog(db);
  const submitted: SubmitRequest[] = [];
  const waiters = new Map<string, { resolve: (task: TaskRecord) => void; reject: (error: unknown) => void }>();
  const timers: Harness["timers"] = [];
  let refusal: Error | undefined;
  const settings = readSettings(env); // as the daemon parses its environment
  const scheduler = new Scheduler({
    db,
    sessions,
    budget: new Budget(db, settings),
    events,
    logger: { info() {}, warn() {}, error() {} },
    settings,
    now: () => now,
    setTimer: (fn, ms) => {
      const timer = { fn, ms, cleared: false };
      timers.push(timer);
      return timer;
    },
    clearTimer: (handle) => {
      (handle as { cleared: boolean }).cleared = true;
    },
    submit: (request) => {
      const error = refusal;
      refusal = undefined;
      if (error) throw error;
      submitted.push(request);
      return tasks.create({
        sessionId: request.sessionId!,
        message: request.message,
        origin: request.origin,
        ...(request.taskType ? { taskType: request.taskType } : {}),
      });
    },
    wait: (taskId) => new Promise((resolve, reject) => waiters.set(taskId, { resolve, reject })),
    findTask: (taskId) => tasks.find(taskId),
  });
  return {
    db,
    scheduler,
    tasks,
    submitted,
    timers,
    refuseNext: (error) => {
      refusal = error;
    },
    finish: async (taskId, error) => {
      tasks.transition(taskId, "running");
      const task = tasks.transition(taskId, error ? "failed" : "completed", { reason: error?.message ?? null });
      const waiter = waiters.get(taskId);
      if (error) waiter?.reject(error);
      else waiter?.resolve(task);
      await new Promise((r) => setImmediate(r));
    },
    events: (kind) =>
      (db.prepare("SELECT data FROM events WHERE kind = ? ORDER BY seq").all(kind) as Array<{ data: string }>).map(
        (row) => JSON.parse(row.data) as Record<string, unknown>,
      ),
  };
}

const base = { name: "news", description: "Summarize the news" };

describe("firing", () => {
  it("fires on time and not before, as a task of origin schedule in the schedule's own session", () => {
    const h = harness();
    const created = h.scheduler.create({ ...base, interval_secs: 60, task_type: "conversation" });
    expect(created).toMatchObject({ status: "active", runs: 0, next_run_at: iso(T0 + 60_000), running_task_id: null });
    expect(h.events("schedule_created")).toEqual([
      { schedule_id: created.id, name: "news", next_run_at: iso(T0 + 60_000) },
    ]);
    now = T0 + 59_999;
    h.scheduler.tick();
    expect(h.submitted).toHaveLength(0);

    now = T0 + 60_000;
    h.scheduler.tick();
    expect(h.submitted).toEqual([
      { message: "Summarize the news", sessionId: created.session_id, origin: "schedule", taskType: "conversation" },
    ]);
    const task = h.tasks.list().items[0]!;
    const after = h.scheduler.get(created.id);
    expect(after).toMatchObject({
      runs: 1,
      running_task_id: task.id,
      last_task_id: task.id,
      last_run_at: iso(T0 + 60_000),
      next_run_at: iso(T0 + 120_000),
    });
    expect(h.events("schedule_fired")).toEqual([
      { schedule_id: created.id, name: "news", task_id: task.id, scheduled_for: iso(T0 + 60_000), missed: 0 },
    ]);
    h.scheduler.tick(); // same instant: nothing more is due
    expect(h.submitted).toHaveLength(1);
  });

  it("arms one timer for the earliest run, capped at 60 s, re-armed on create and delete, stopped by close", () => {
    const h = harness({ ASSISTANT_SCHEDULE_MIN_INTERVAL_SECS: "1" });
    const live = () => h.timers.filter((t) => !t.cleared);
    const hourly = h.scheduler.create({ ...base, interval_secs: 3600 });
    expect(live().map((t) => t.ms)).toEqual([MAX_TIMER_MS]);
    const fast = h.scheduler.create({ ...base, name: "fast", interval_secs: 5 });
    expect(live().map((t) => t.ms)).toEqual([5_000]);
    now += 5_000;
    const due = live()[0]!;
    due.cleared = true; // a timer that went off is spent
    due.fn(); // the due schedule runs and the timer is armed again
    expect(h.submitted).toHaveLength(1);
    expect(live().map((t) => t.ms)).toEqual([5_000]);
    h.scheduler.delete(fast.id);
    expect(live().map((t) => t.ms)).toEqual([MAX_TIMER_MS]);
    h.scheduler.pause(hourly.id);
    expect(live()).toEqual([]);
    h.scheduler.resume(hourly.id);
    expect(live()).toHaveLength(1);
    h.scheduler.close();
    expect(live()).toEqual([]);
    now += 3_600_000;
    h.scheduler.tick();
    expect(h.submitted).toHaveLength(1);
  });

  it("never overlaps itself: a window reached while the run is in flight is skipped with an event", async () => {
    const h = harness();
    const s = h.scheduler.create({ ...base, interval_secs: 60 });
    now = T0 + 60_000;
    h.scheduler.tick();
    const first = h.tasks.list().items[0]!;
    now = T0 + 120_000;
    h.scheduler.tick();
    expect(h.submitted).toHaveLength(1);
    expect(h.scheduler.get(s.id)).toMatchObject({ running_task_id: first.id, next_run_at: iso(T0 + 180_000), runs: 1 });
    const skipped = h.events("schedule_skipped");
    expect(skipped).toHaveLength(1);
    expect(skipped[0]).toMatchObject({ schedule_id: s.id, reason: "overlap" });
    expect(skipped[0]!.message).toContain(first.id);

    await h.finish(first.id);
    expect(h.scheduler.get(s.id).running_task_id).toBeNull();
    now = T0 + 180_000;
    h.scheduler.tick();
    expect(h.submitted).toHaveLength(2);
    expect(h.scheduler.get(s.id)).toMatchObject({ runs: 2, next_run_at: iso(T0 + 240_000) });
  });

  it("a run that cannot start is not retried in a loop: the schedule moves to its next window", () => {
    const h = harness();
    const s = h.scheduler.create({ ...base, interval_secs: 60 });
    h.refuseNext(new AppError("conflict", "the daemon is stopping"));
    now = T0 + 60_000;
    h.scheduler.tick();
    expect(h.submitted).toHaveLength(0);
    expect(h.scheduler.get(s.id)).toMatchObject({ runs: 0, running_task_id: null, next_run_at: iso(T0 + 120_000) });
    expect(h.events("schedule_fired")).toEqual([]);
    now = T0 + 120_000;
    h.scheduler.tick();
    expect(h.submitted).toHaveLength(1);
  });

  it("deleting a schedule with a run in flight lets the run finish", async () => {
    const h = harness();
    const s = h.scheduler.create({ ...base, interval_secs: 60 });
    now = T0 + 60_000;
    h.scheduler.tick();
    const run = h.tasks.list().items[0]!;
    expect(h.scheduler.delete(s.id).id).toBe(s.id);
    expect(h.events("schedule_deleted")).toEqual([{ schedule_id: s.id, name: "news" }]);
    expect(() => h.scheduler.get(s.id)).toThrow(/no schedule/);
    await h.finish(run.id);
    expect(h.tasks.get(run.id).status).toBe("completed");
    expect(() => h.scheduler.delete(s.id)).toThrow(expect.objectContaining({ code: "not_found" }));
  });
});

describe("time zones", () => {
  it("a cron schedule runs in its own IANA zone, stored canonically, across a restart and a resume", () => {
    const first = harness();
    // 2030-01-01 is a Tuesday; 09:00 in New York (EST) is 14:00 UTC.
    const s = first.scheduler.create({ ...base, cron: "0 9 * * mon-fri", timezone: "america/new_york" });
    expect(s).toMatchObject({ timezone: "America/New_York", next_run_at: "2030-01-01T14:00:00.000Z" });
    const local = first.scheduler.create({ ...base, name: "local", cron: "0 9 * * mon-fri" });
    expect(local.timezone).toBeNull();
    first.scheduler.close();
    first.db.close();
    open.splice(0);

    now = Date.parse("2030-01-01T14:00:00.000Z");
    const second = harness();
    second.scheduler.tick();
    expect(second.submitted.map((r) => r.sessionId)).toContain(s.session_id);
    expect(second.scheduler.get(s.id).next_run_at).toBe("2030-01-02T14:00:00.000Z");
    second.scheduler.pause(s.id);
    now = Date.parse("2030-07-01T00:00:00.000Z"); // summer time: 09:00 EDT is 13:00 UTC
    expect(second.scheduler.resume(s.id).next_run_at).toBe("2030-07-01T13:00:00.000Z");
  });
  it("a schedule made before time zones existed (schema v7) keeps the daemon's local zone after the upgrade", () => {
    const before = openDatabase(join(dir, "assistant.db"), { migrations: MIGRATIONS.filter((m) => m.version <= 7) });
    before
      .prepare(
        `INSERT INTO schedules (id, name, description, cron, session_id, status, next_run_at, created_at, updated_at)
         VALUES ('old', 'old', 'Summarize', '0 * * * *', 's', 'active', ?, ?, ?)`,
      )
      .run(iso(T0 + 3_600_000), iso(T0), iso(T0));
    before.close();
    const h = harness();
    expect(h.scheduler.get("old")).toMatchObject({ cron: "0 * * * *", timezone: null });
    expect(() =>
      h.db.prepare("UPDATE schedules SET cron = NULL, interval_secs = 60, timezone = 'UTC' WHERE id = 'old'").run(),
    ).toThrow(/CHECK constraint/);
  });
});

describe("restart and downtime", () => {
  it("a new scheduler over the same file keeps the schedules and their cadence", () => {
    const first = harness();
    const s = first.scheduler.create({ ...base, interval_secs: 60 });
    first.scheduler.close();
    first.db.close();
    open.splice(0);

    now = T0 + 30_000;
    const second = harness();
    expect(second.scheduler.start()).toEqual({ cleared: 0, followed: 0 });
    expect(second.scheduler.list().items.map((x) => x.id)).toEqual([s.id]);
    expect(second.submitted).toHaveLength(0);
    now = T0 + 60_000;
    second.scheduler.tick();
    expect(second.submitted).toHaveLength(1);
  });

  it("windows that passed while the daemon was down run once, with the number missed", () => {
    const first = harness();
    const s = first.scheduler.create({ ...base, interval_secs: 60 });
    first.scheduler.close();

    // Down from T0 to T0 + 5.5 min: windows at 1, 2, 3, 4 and 5 min passed.
    now = T0 + 5 * 60_000 + 30_000;
    const second = harness();
    second.scheduler.start();
    second.scheduler.tick();
    expect(second.submitted).toHaveLength(1);
    expect(second.events("schedule_fired")).toEqual([
      expect.objectContaining({ schedule_id: s.id, scheduled_for: iso(T0 + 60_000), missed: 4 }),
    ]);
    expect(second.scheduler.get(s.id)).toMatchObject({ runs: 1, next_run_at: iso(T0 + 6 * 60_000) });
  });

  it("start forgets a run whose task ended while the daemon was down, and follows one still queued", async () => {
    const first = harness();
    const ended = first.scheduler.create({ ...base, interval_secs: 60 });
    const queued = first.scheduler.create({ ...base, name: "queued", interval_secs: 60 });
    now = T0 + 60_000;
    first.scheduler.tick();
    const [runQueued, runEnded] = first.tasks.list().items;
    first.scheduler.close();
    // What TaskService.recover() does to a task that was running when the daemon died.
    first.tasks.transition(runEnded!.id, "running");
    first.tasks.transition(runEnded!.id, "failed", { reason: "interrupted" });

    now = T0 + 90_000;
    const second = harness();
    expect(second.scheduler.start()).toEqual({ cleared: 1, followed: 1 });
    expect(second.scheduler.get(ended.id).running_task_id).toBeNull();
    expect(second.scheduler.get(queued.id).running_task_id).toBe(runQueued!.id);
    await second.finish(runQueued!.id);
    expect(second.scheduler.get(queued.id).running_task_id).toBeNull();
  });
});

describe("budget", () => {
  const env = { ASSISTANT_MAX_TOKENS_PER_SESSION: "100" };

  it("a spent session budget pauses the schedule before the run, with the reason and what to do", () => {
    const h = harness(env);
    const s = h.scheduler.create({ ...base, interval_secs: 60 });
    new Budget(h.db, readSettings(env)).add(s.session_id, { input: 80, output: 20 }, 0);
    now = T0 + 60_000;
    h.scheduler.tick();
    expect(h.submitted).toHaveLength(0);
    const paused = h.scheduler.get(s.id);
    expect(paused.status).toBe("paused");
    expect(paused.status_reason).toContain("100 tokens of its 100 token budget");
    expect(paused.status_reason).toContain(`assistant schedule resume ${s.id}`);
    expect(h.events("schedule_skipped")).toEqual([
      { schedule_id: s.id, name: "news", reason: "budget", message: paused.status_reason },
    ]);
    expect(h.events("schedule_paused")).toEqual([
      { schedule_id: s.id, name: "news", reason: "budget", message: paused.status_reason },
    ]);
    expect(h.events("budget_exhausted")).toEqual([
      { source: "schedule", source_id: s.id, session_id: s.session_id, message: paused.status_reason },
    ]);
    // Paused: later windows do nothing.
    now = T0 + 10 * 60_000;
    h.scheduler.tick();
    expect(h.submitted).toHaveLength(0);
    // Resumed after the usage is reset: the next run is one window from now.
    new Budget(h.db, readSettings(env)).resetSession(s.session_id);
    expect(h.scheduler.resume(s.id)).toMatchObject({
      status: "active",
      status_reason: null,
      next_run_at: iso(now + 60_000),
    });
    now += 60_000;
    h.scheduler.tick();
    expect(h.submitted).toHaveLength(1);
  });

  it("a run that failed with budget_exceeded pauses the schedule", async () => {
    const h = harness(env);
    const s = h.scheduler.create({ ...base, interval_secs: 60 });
    now = T0 + 60_000;
    h.scheduler.tick();
    const run = h.tasks.list().items[0]!;
    await h.finish(run.id, new AppError("budget_exceeded", "spent", { max_tokens_per_session: 100, tokens_used: 120 }));
    expect(h.scheduler.get(s.id)).toMatchObject({ status: "paused", running_task_id: null });
    expect(h.events("budget_exhausted")).toHaveLength(1);
  });
});

describe("pause and resume", () => {
  it("pausing a paused schedule or resuming an active one is a conflict", () => {
    const h = harness();
    const s = h.scheduler.create({ ...base, cron: "0 9 * * mon-fri" });
    expect(s).toMatchObject({ interval_secs: null, cron: "0 9 * * mon-fri" });
    expect(() => h.scheduler.resume(s.id)).toThrow(expect.objectContaining({ code: "conflict" }));
    expect(h.scheduler.pause(s.id)).toMatchObject({
      status: "paused",
      status_reason: expect.stringContaining("resume"),
    });
    expect(() => h.scheduler.pause(s.id)).toThrow(expect.objectContaining({ code: "conflict" }));
    expect(() => h.scheduler.pause("nope")).toThrow(expect.objectContaining({ code: "not_found" }));
    const resumed = h.scheduler.resume(s.id);
    expect(h.events("schedule_paused")).toEqual([
      { schedule_id: s.id, name: "news", reason: "request", message: expect.stringContaining("resume") },
    ]);
    expect(h.events("schedule_resumed")).toEqual([
      { schedule_id: s.id, name: "news", next_run_at: resumed.next_run_at },
    ]);
  });
});

describe("validation", () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ["zero interval", { ...base, interval_secs: 0 }, "interval_secs"],
    ["negative interval", { ...base, interval_secs: -60 }, "interval_secs"],
    ["fractional interval", { ...base, interval_secs: 60.5 }, "interval_secs"],
    ["interval under the minimum", { ...base, interval_secs: 59 }, "interval_secs"],
    ["interval over a year", { ...base, interval_secs: 31_536_001 }, "interval_secs"],
    ["interval as a string", { ...base, interval_secs: "60" }, "interval_secs"],
    ["neither interval nor cron", { ...base }, "interval_secs"],
    ["both interval and cron", { ...base, interval_secs: 60, cron: "* * * * *" }, "cron"],
    ["bad cron", { ...base, cron: "61 * * * *" }, "cron"],
    ["unknown time zone", { ...base, cron: "0 9 * * *", timezone: "Mars/Olympus" }, "timezone"],
    ["UTC offset as a time zone", { ...base, cron: "0 9 * * *", timezone: "+02:00" }, "timezone"],
    ["time zone on an interval", { ...base, interval_secs: 60, timezone: "Europe/Paris" }, "timezone"],
    ["empty name", { ...base, name: " ", interval_secs: 60 }, "name"],
    ["long name", { ...base, name: "x".repeat(101), interval_secs: 60 }, "name"],
    ["empty description", { ...base, description: "", interval_secs: 60 }, "description"],
    ["long description", { ...base, description: "x".repeat(4001), interval_secs: 60 }, "description"],
    ["bad task type", { ...base, interval_secs: 60, task_type: "no spaces" }, "task_type"],
    ["unknown field", { ...base, interval_secs: 60, every: 5 }, "body"],
  ];
  for (const [what, input, field] of cases) {
    it(`refuses ${what}`, () => {
      const h = harness();
      expect(() => h.scheduler.create(input)).toThrow(
        expect.objectContaining({ code: "invalid_request", details: { field } }),
      );
      expect(h.scheduler.list().items).toEqual([]);
    });
  }

  it("accepts the limits exactly, and a minimum interval from the environment", () => {
    const h = harness({ ASSISTANT_SCHEDULE_MIN_INTERVAL_SECS: "1" });
    h.scheduler.create({ name: "x".repeat(100), description: "y".repeat(4000), interval_secs: 1 });
    h.scheduler.create({ ...base, interval_secs: 31_536_000 });
    expect(h.scheduler.list().items).toHaveLength(2);
    expect(() => harness({ ASSISTANT_SCHEDULE_MIN_INTERVAL_SECS: "0" })).toThrow(
      /ASSISTANT_SCHEDULE_MIN_INTERVAL_SECS/,
    );
  });

  it("lists newest first with a cursor", () => {
    const h = harness();
    const made = [1, 2, 3].map((n) => h.scheduler.create({ ...base, name: `s${n}`, interval_secs: 60 }));
    const page = h.scheduler.list({ limit: 2 });
    expect(page.items.map((s) => s.name)).toEqual(["s3", "s2"]);
    const rest = h.scheduler.list({ limit: 2, cursor: page.next_cursor! });
    expect(rest).toEqual({ items: [expect.objectContaining({ id: made[0]!.id })], next_cursor: null });
  });
});
