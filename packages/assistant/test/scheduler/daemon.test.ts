import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/store/database.ts";
import { agentDataDir } from "../agent/helpers.ts";
import { waitFor } from "../daemon/helpers.ts";
import { api as apiCall, startDaemon, type TestDaemon, tempDataDir } from "../helpers/daemon.ts";
import { type ScriptedServer, startOpenAiServer } from "../llm/servers/openaiServer.ts";
import { runCli } from "../setup/helpers.ts";

// Schedules on the real daemon (ASSISTANT_SCHEDULE_MIN_INTERVAL_SECS=1, the model a scripted OpenAI server):
// created over HTTP and with /schedule, runs are completed tasks with reports, events are stored, every bad input
// gets its documented error, and a schedule survives a restart and catches up once after downtime.

let server: ScriptedServer;
let daemon: TestDaemon;
let dataDir: string;
let work: string;
const env = { ASSISTANT_SCHEDULE_MIN_INTERVAL_SECS: "1" };

beforeAll(async () => {
  server = await startOpenAiServer();
  work = tempDataDir("assistant-schedule-work-");
  dataDir = agentDataDir(server.url, work);
  daemon = await startDaemon({ ...env, ASSISTANT_EMBEDDED_MODEL_PATH: join(dataDir, "no-such-model.gguf") }, dataDir);
});
afterAll(async () => {
  await daemon?.stop();
  await server?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  if (work) rmSync(work, { recursive: true, force: true });
});

const api = (method: string, path: string, body?: unknown) => apiCall(daemon, method, path, body);

interface Stored {
  seq: number;
  data: Record<string, unknown>;
}

/** Stored events of a kind for one schedule, read from assistant.db (the SSE stream never ends). */
function storedEvents(kind: string, scheduleId: string): Stored[] {
  const db = openDatabase(join(dataDir, "assistant.db"), { readonly: true });
  try {
    const rows = db.prepare("SELECT seq, data FROM events WHERE kind = ? ORDER BY seq").all(kind) as Array<{
      seq: number;
      data: string;
    }>;
    return rows
      .map((row) => ({ seq: row.seq, data: JSON.parse(row.data) as Record<string, unknown> }))
      .filter((event) => event.data.schedule_id === scheduleId);
  } finally {
    db.close();
  }
}

async function slash(message: string): Promise<string> {
  const res = await api("POST", "/api/message", { message, wait: true });
  expect(res.status, res.body).toBe(200);
  expect(res.json().command).toBe(true);
  return res.json().reply;
}

describe("schedules on the daemon", () => {
  it("POST creates a schedule that fires; its run is a completed task with a report; DELETE removes it", async () => {
    const res = await api("POST", "/api/schedules", {
      name: "pulse",
      description: "Say pulse",
      interval_secs: 1,
      task_type: "conversation",
    });
    expect(res.status, res.body).toBe(201);
    const created = res.json();
    expect(Object.keys(created).sort()).toEqual(
      [
        "id",
        "name",
        "description",
        "interval_secs",
        "cron",
        "timezone",
        "task_type",
        "session_id",
        "status",
        "status_reason",
        "next_run_at",
        "last_run_at",
        "last_task_id",
        "running_task_id",
        "runs",
        "created_at",
        "updated_at",
      ].sort(),
    );
    expect(created).toMatchObject({ name: "pulse", interval_secs: 1, cron: null, status: "active", runs: 0 });
    expect(Date.parse(created.next_run_at) - Date.parse(created.created_at)).toBe(1000);

    const ran = await waitFor("the first run to complete", async () => {
      const schedule = (await api("GET", `/api/schedules/${created.id}`)).json();
      if (!schedule.last_task_id) return undefined;
      const task = (await api("GET", `/api/tasks/${schedule.last_task_id}`)).json();
      return task.status === "completed" ? task : undefined;
    });
    expect(ran).toMatchObject({
      origin: "schedule",
      session_id: created.session_id,
      message: "Say pulse",
      task_type: "conversation",
    });
    expect(ran.reply).toContain("Hello from the test server");
    expect(existsSync(join(dataDir, "reports", `${ran.id}.json`))).toBe(true);
    expect(existsSync(join(dataDir, "reports", `${ran.id}.md`))).toBe(true);
    const fired = storedEvents("schedule_fired", created.id).find((e) => e.data.task_id === ran.id);
    expect(fired?.data).toMatchObject({ name: "pulse", missed: 0 });
    expect(storedEvents("schedule_created", created.id)).toHaveLength(1);

    const removed = await api("DELETE", `/api/schedules/${created.id}`);
    expect(removed.status).toBe(200);
    expect(removed.json()).toEqual({ removed: created.id });
    expect(storedEvents("schedule_deleted", created.id)).toHaveLength(1);
    expect((await api("GET", `/api/schedules/${created.id}`)).status).toBe(404);
    const again = await api("DELETE", `/api/schedules/${created.id}`);
    expect(again.status).toBe(404);
    expect(again.json().error.code).toBe("not_found");
  });

  it("/schedule creates, lists and deletes; /help lists it; bad lines get the usage", async () => {
    const reply = await slash('/schedule create "morning news" 1 "Summarize the news"');
    const id = /Schedule ([0-9a-f-]{36}) created/.exec(reply)?.[1];
    expect(id, reply).toBeDefined();
    expect((await api("GET", `/api/schedules/${id}`)).json()).toMatchObject({
      name: "morning news",
      description: "Summarize the news",
      interval_secs: 1,
    });
    await waitFor("the slash-created schedule to fire", () =>
      storedEvents("schedule_fired", id!).length > 0 ? true : undefined,
    );
    expect(await slash("/schedule list")).toContain(id);
    expect(await slash("/schedule")).toContain("morning news");
    expect(await slash("/help")).toContain('/schedule [list | create <NAME> <INTERVAL> "<description>"');
    expect(await slash('/schedule create news abc "x"')).toContain(
      'The interval must be seconds (3600) or a duration such as 90s, 30m, 1h, 1h30m or 2d (got "abc").',
    );
    // The forms people type, through the parser the CLI shares.
    const hourly = /Schedule ([0-9a-f-]{36}) created/.exec(await slash('/schedule create hourly 1h30m "x"'))?.[1];
    expect((await api("GET", `/api/schedules/${hourly}`)).json()).toMatchObject({ interval_secs: 5400 });
    expect((await api("DELETE", `/api/schedules/${hourly}`)).status).toBe(200);
    expect(await slash('/schedule create news 0 "x"')).toContain("interval_secs: at least 1 seconds");
    expect(await slash("/schedule create news 5")).toContain("usage:");
    expect(await slash("/schedule frobnicate")).toContain("usage:");
    expect(await slash("/schedule delete no-such-id")).toContain("no schedule with id no-such-id");
    expect(await slash(`/schedule delete ${id}`)).toContain(`Schedule morning news (${id}) deleted.`);
    expect((await api("GET", `/api/schedules/${id}`)).status).toBe(404);
  });

  it("every bad input gets the documented error", async () => {
    const ok = { name: "n", description: "d" };
    const bad: Array<[unknown, string]> = [
      [{ ...ok, interval_secs: 0 }, "body.interval_secs"],
      [{ ...ok, interval_secs: -5 }, "body.interval_secs"],
      [{ ...ok, interval_secs: 1.5 }, "body.interval_secs"],
      [{ ...ok, interval_secs: 31_536_001 }, "body.interval_secs"],
      [{ ...ok, interval_secs: 1e300 }, "body.interval_secs"],
      [{ ...ok, interval_secs: "60" }, "body.interval_secs"],
      [{ ...ok }, "body.interval_secs"],
      [{ ...ok, interval_secs: 60, cron: "* * * * *" }, "body.cron"],
      [{ ...ok, cron: "* * *" }, "body.cron"],
      [{ ...ok, cron: "0 0 31 2 *" }, "body.cron"],
      [{ ...ok, cron: "0 9 * * *", timezone: "Europe/Pariss" }, "body.timezone"],
      [{ ...ok, interval_secs: 60, timezone: "UTC" }, "body.timezone"],
      [{ ...ok, name: "", interval_secs: 60 }, "body.name"],
      [{ ...ok, name: "x".repeat(101), interval_secs: 60 }, "body.name"],
      [{ ...ok, description: "", interval_secs: 60 }, "body.description"],
      [{ ...ok, description: "x".repeat(4001), interval_secs: 60 }, "body.description"],
      [{ description: "d", interval_secs: 60 }, "body.name"],
      [{ ...ok, interval_secs: 60, every: 5 }, "body"],
    ];
    for (const [body, field] of bad) {
      const res = await api("POST", "/api/schedules", body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json().error, JSON.stringify(body)).toMatchObject({ code: "invalid_request", details: { field } });
    }
    const badZone = await api("POST", "/api/schedules", { ...ok, cron: "0 9 * * *", timezone: "Mars/Olympus" });
    expect(badZone.json().error.message).toContain(
      '"Mars/Olympus" is not a time zone: expected an IANA name such as Europe/Paris',
    );
    expect((await api("POST", "/api/schedules")).status).toBe(400);
    expect((await api("GET", "/api/schedules")).json().items).toEqual([]);
    for (const query of ["limit=0", "limit=501", "limit=x", "cursor=nope"]) {
      const res = await api("GET", `/api/schedules?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.json().error.code).toBe("invalid_request");
    }
    for (const path of ["/api/schedules/nope", "/api/schedules/nope/pause", "/api/schedules/nope/resume"]) {
      const res = await api(path.endsWith("nope") ? "GET" : "POST", path);
      expect(res.status, path).toBe(404);
      expect(res.json().error.code).toBe("not_found");
    }

    // Pause and resume, with 409 for the wrong state; a cron schedule; paging.
    const hourly = (await api("POST", "/api/schedules", { ...ok, name: "hourly", cron: "0 * * * *" })).json();
    expect(hourly.timezone).toBeNull();
    const daily = (await api("POST", "/api/schedules", { ...ok, name: "daily", interval_secs: 86_400 })).json();
    expect((await api("POST", `/api/schedules/${hourly.id}/resume`)).status).toBe(409);
    const paused = await api("POST", `/api/schedules/${hourly.id}/pause`);
    expect(paused.json()).toMatchObject({ status: "paused", status_reason: expect.stringContaining("resume") });
    const twice = await api("POST", `/api/schedules/${hourly.id}/pause`);
    expect(twice.status).toBe(409);
    expect(twice.json().error.code).toBe("conflict");
    expect((await api("POST", `/api/schedules/${hourly.id}/resume`)).json()).toMatchObject({
      status: "active",
      status_reason: null,
    });
    const page = (await api("GET", "/api/schedules?limit=1")).json();
    expect(page.items.map((s: { id: string }) => s.id)).toEqual([daily.id]);
    const rest = (await api("GET", `/api/schedules?limit=1&cursor=${page.next_cursor}`)).json();
    expect(rest).toEqual({ items: [expect.objectContaining({ id: hourly.id })], next_cursor: null });
    for (const s of [hourly, daily]) expect((await api("DELETE", `/api/schedules/${s.id}`)).status).toBe(200);
  });

  it("assistant schedule create, list, pause, resume and delete go through the daemon", async () => {
    const cli = (...args: string[]) => runCli(["schedule", ...args], { env: { ASSISTANT_DATA_DIR: dataDir } });
    const created = await cli("create", "weekly report", "3600", "Write", "the", "weekly", "report", "--json");
    expect(created.code, created.stderr).toBe(0);
    const schedule = created.json();
    expect(schedule).toMatchObject({
      name: "weekly report",
      description: "Write the weekly report",
      interval_secs: 3600,
    });
    const cron = await cli(
      "create",
      "mornings",
      "Plan the day",
      "--cron",
      "0 8 * * mon-fri",
      "--task-type",
      "conversation",
    );
    expect(cron.code, cron.stderr).toBe(0);
    expect(cron.stdout).toContain('mornings  (cron "0 8 * * mon-fri", active)');
    const zoned = await cli("create", "paris", "Plan", "--cron", "30 2 * * *", "--timezone", "Europe/Paris", "--json");
    expect(zoned.code, zoned.stderr).toBe(0);
    expect(zoned.json()).toMatchObject({ cron: "30 2 * * *", timezone: "Europe/Paris" });
    expect((await cli("list")).stdout).toContain('paris  (cron "30 2 * * *" Europe/Paris, active)');
    const badZone = await cli("create", "x", "y", "--cron", "0 9 * * *", "--timezone", "Paris");
    expect(badZone.code).toBe(1);
    expect(badZone.stderr).toContain('"Paris" is not a time zone');
    const listed = await cli("list");
    expect(listed.stdout).toContain("weekly report  (every 3600 s, active)");
    expect((await cli("pause", schedule.id)).stdout).toContain("paused");
    const again = await cli("pause", schedule.id);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("already paused");
    expect((await cli("resume", schedule.id, "--json")).json()).toMatchObject({ status: "active" });
    // The daemon's refusal is a sentence, never the request path (body.interval_secs: ...).
    const bad = await cli("create", "x", "0", "y");
    expect(bad).toMatchObject({
      code: 1,
      stderr: "error: the interval must be at least 1 seconds (ASSISTANT_SCHEDULE_MIN_INTERVAL_SECS)\n",
    });
    const minutes = await cli("create", "every half hour", "30m", "Stretch", "--json");
    expect(minutes.code, minutes.stderr).toBe(0);
    expect(minutes.json()).toMatchObject({ interval_secs: 1800, description: "Stretch" });
    const typo = await cli("create", "x", "5q", "y");
    expect(typo).toMatchObject({
      code: 2,
      stderr:
        'error: the interval must be seconds (3600) or a duration such as 90s, 30m, 1h, 1h30m or 2d (got "5q")\n(run `assistant schedule create --help` for its usage)\n',
    });
    const taskType = await cli("create", "x", "60", "y", "--task-type", "conversaton");
    expect(taskType.code).toBe(2);
    expect(taskType.stderr).toContain('unknown task type "conversaton" (did you mean "conversation"?)');
    // Any client of the API gets the same refusal.
    const viaApi = await api("POST", "/api/schedules", {
      name: "x",
      description: "y",
      interval_secs: 60,
      task_type: "conversaton",
    });
    expect(viaApi.status).toBe(400);
    expect(viaApi.json().error.message).toContain('unknown task type "conversaton" (did you mean "conversation"?)');
    const badCron = await cli("create", "x", "y", "--cron", "99 * * * *");
    expect(badCron.stderr).toContain("minute 99 is out of range 0-59");
    for (const args of [
      ["create", "x", "60"],
      ["create", "x", "1h", "y", "--cron", "* * * * *"],
    ]) {
      const usage = await cli(...args);
      expect(usage.code, args.join(" ")).toBe(2);
      expect(usage.stderr).toBe(
        "error: give <NAME> <INTERVAL> <DESCRIPTION>, or <NAME> <DESCRIPTION> --cron <expr>\n(run `assistant schedule create --help` for its usage)\n",
      );
    }
    for (const item of (await cli("list", "--json")).json().items as Array<{ id: string }>) {
      expect((await cli("delete", item.id)).stdout).toContain(`Deleted schedule ${item.id}.`);
    }
    expect((await cli("delete", schedule.id)).stderr).toContain(`no schedule with id ${schedule.id}`);
  });

  it("a spent session budget pauses the schedule with the reason, and the events are stored", async () => {
    expect((await api("POST", "/api/budget", { max_tokens_per_session: 10 })).status).toBe(200);
    try {
      server.enqueue({ kind: "reply", text: "done", usage: { input: 50, output: 5 } });
      const created = (
        await api("POST", "/api/schedules", { name: "spender", description: "Spend", interval_secs: 1 })
      ).json();
      const paused = await waitFor("the schedule to pause", async () => {
        const schedule = (await api("GET", `/api/schedules/${created.id}`)).json();
        return schedule.status === "paused" ? schedule : undefined;
      });
      expect(paused.runs).toBe(1);
      expect(paused.status_reason).toContain("55 tokens of its 10 token budget");
      expect(paused.status_reason).toContain(`assistant schedule resume ${created.id}`);
      expect(storedEvents("schedule_skipped", created.id).map((e) => e.data.reason)).toEqual(["budget"]);
      const db = openDatabase(join(dataDir, "assistant.db"), { readonly: true });
      const exhausted = db.prepare("SELECT data FROM events WHERE kind = 'budget_exhausted'").all() as Array<{
        data: string;
      }>;
      db.close();
      expect(exhausted.map((row) => JSON.parse(row.data))).toContainEqual({
        source: "schedule",
        source_id: created.id,
        session_id: created.session_id,
        message: paused.status_reason,
      });
      expect((await api("DELETE", `/api/schedules/${created.id}`)).status).toBe(200);
    } finally {
      await api("POST", "/api/budget", { max_tokens_per_session: null });
    }
  });

  it("survives a restart, and windows missed while the daemon was stopped run once", async () => {
    const created = (
      await api("POST", "/api/schedules", { name: "catch-up", description: "Say hello", interval_secs: 1 })
    ).json();
    await daemon.stop();
    const db = openDatabase(join(dataDir, "assistant.db"), { readonly: true });
    const before = db.prepare("SELECT next_run_at, runs FROM schedules WHERE id = ?").get(created.id) as {
      next_run_at: string;
      runs: number;
    };
    db.close();
    const firedBefore = storedEvents("schedule_fired", created.id).length;
    await new Promise((r) => setTimeout(r, 3500)); // stopped across at least three windows

    daemon = await startDaemon({ ...env, ASSISTANT_EMBEDDED_MODEL_PATH: join(dataDir, "no-such-model.gguf") }, dataDir);
    expect((await api("GET", `/api/schedules/${created.id}`)).json()).toMatchObject({ name: "catch-up" });
    const after = await waitFor("two runs after the restart", () => {
      const events = storedEvents("schedule_fired", created.id).slice(firedBefore);
      return events.length >= 2 ? events : undefined;
    });
    const [catchUp, following] = after.map((e) => e.data);
    expect(catchUp!.scheduled_for).toBe(before.next_run_at);
    const missed = catchUp!.missed as number;
    expect(missed).toBeGreaterThanOrEqual(2);
    // Not a burst: the next run is on the original cadence, after the missed windows.
    const offset = Date.parse(following!.scheduled_for as string) - Date.parse(before.next_run_at);
    expect(offset % 1000).toBe(0);
    expect(offset).toBeGreaterThanOrEqual((missed + 1) * 1000);
    expect((await api("DELETE", `/api/schedules/${created.id}`)).status).toBe(200);
  });
});
