import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentDataDir } from "../agent/helpers.ts";
import { api as apiCall, startDaemon, type TestDaemon, tempDataDir, until } from "../helpers/daemon.ts";
import { type ScriptedServer, startOpenAiServer } from "../llm/servers/openaiServer.ts";

// GET /api/calendar on the real daemon (the model a scripted OpenAI server): future fires of real schedules by
// their own cadence (interval and cron), the mission heartbeat, past task runs and mission cycles; bad ranges,
// hostile input and a missing token are refused with the documented errors.

let server: ScriptedServer;
let daemon: TestDaemon;
let dataDir: string;
let work: string;

beforeAll(async () => {
  server = await startOpenAiServer();
  work = tempDataDir("assistant-calendar-work-");
  dataDir = agentDataDir(server.url, work);
  daemon = await startDaemon({ ASSISTANT_EMBEDDED_MODEL_PATH: join(dataDir, "no-such-model.gguf") }, dataDir);
});
afterAll(async () => {
  await daemon?.stop();
  await server?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  if (work) rmSync(work, { recursive: true, force: true });
});

const api = (method: string, path: string, body?: unknown) => apiCall(daemon, method, path, body);
const DAY = 86_400_000;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

interface Item {
  kind: string;
  at: string;
  title: string;
  ref_id: string | null;
  status?: string;
}

async function calendar(from: string, to: string): Promise<{ items: Item[]; truncated: boolean }> {
  const res = await api("GET", `/api/calendar?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`);
  expect(res.status, res.body).toBe(200);
  return res.json();
}

describe("GET /api/calendar", () => {
  it("lists schedule fires by interval and cron, mission heartbeats and cycles, and past tasks", async () => {
    const hourly = (
      await api("POST", "/api/schedules", { name: "hourly check", description: "Check", interval_secs: 3600 })
    ).json();
    const morning = (
      await api("POST", "/api/schedules", {
        name: "morning note",
        description: "Note",
        cron: "30 9 * * *",
        timezone: "UTC",
      })
    ).json();
    const paused = (
      await api("POST", "/api/schedules", { name: "paused one", description: "No", interval_secs: 7200 })
    ).json();
    expect((await api("POST", `/api/schedules/${paused.id}/pause`)).status).toBe(200);

    const done = await api("POST", "/api/message", { message: "Plan the week\nwith details", wait: true });
    expect(done.status, done.body).toBe(200);
    const taskId = done.json().task_id as string;

    // A mission with a 1 s heartbeat runs one cycle; then an hourly heartbeat leaves it idle.
    expect(
      (await api("PUT", "/api/autonomous-mission", { objective: "Tidy notes", heartbeat_secs: 1, enabled: true }))
        .status,
    ).toBe(200);
    const now = Date.now();
    const withCycle = await until(
      () => calendar(day(now - DAY), day(now + 2 * DAY)),
      (c) => c.items.some((i) => i.kind === "mission" && i.status === "completed"),
    );
    expect((await api("PUT", "/api/autonomous-mission", { heartbeat_secs: 3600 })).status).toBe(200);
    const cycle = withCycle.items.find((i) => i.kind === "mission" && i.status === "completed")!;
    expect(cycle.title).toMatch(/^Mission cycle \d+$/);
    expect((await api("GET", `/api/tasks/${cycle.ref_id}`)).json().origin).toBe("mission");

    const from = day(now - DAY);
    const to = day(now + 2 * DAY);
    const { items, truncated } = await calendar(from, to);
    expect(truncated).toBe(false);
    const times = items.map((i) => i.at);
    expect(times).toEqual([...times].sort());

    const task = items.find((i) => i.ref_id === taskId)!;
    expect(task).toMatchObject({ kind: "task", title: "Plan the week", status: "completed" });

    const hourlyFires = items.filter((i) => i.ref_id === hourly.id).map((i) => Date.parse(i.at));
    expect(hourlyFires[0]).toBe(Date.parse(hourly.next_run_at));
    expect(hourlyFires.slice(1).every((t, i) => t - hourlyFires[i]! === 3_600_000)).toBe(true);
    expect(hourlyFires.at(-1)! + 3_600_000).toBeGreaterThanOrEqual(Date.parse(`${to}T00:00:00Z`));
    const morningFires = items.filter((i) => i.ref_id === morning.id);
    expect(morningFires.length).toBeGreaterThanOrEqual(1);
    expect(morningFires.every((i) => i.at.endsWith("T09:30:00.000Z") && i.title === "morning note")).toBe(true);
    expect(morningFires.every((i) => i.status === undefined && i.kind === "schedule")).toBe(true);
    expect(items.some((i) => i.ref_id === paused.id)).toBe(false);

    const beats = await until(
      () => calendar(from, to),
      (c) => c.items.filter((i) => i.kind === "mission" && i.ref_id === null).length > 1,
    );
    const future = beats.items.filter((i) => i.kind === "mission" && i.ref_id === null).map((i) => Date.parse(i.at));
    expect(future[1]! - future[0]!).toBe(3_600_000);

    // A range entirely in the past has the runs and no future fires.
    const past = await calendar(new Date(now - DAY).toISOString(), new Date().toISOString());
    expect(past.items.some((i) => i.ref_id === taskId)).toBe(true);
    expect(past.items.every((i) => i.status !== undefined)).toBe(true);

    // A minute cron over 92 days is capped per schedule and says so.
    const busy = (await api("POST", "/api/schedules", { name: "busy", description: "B", cron: "* * * * *" })).json();
    const capped = await calendar(day(now), day(now + 92 * DAY));
    expect(capped.truncated).toBe(true);
    expect(capped.items.filter((i) => i.ref_id === busy.id)).toHaveLength(300);
    await api("PUT", "/api/autonomous-mission", { enabled: false });
  });

  it("refuses missing, malformed, reversed and too long ranges naming the field", async () => {
    const cases: Array<[string, string, RegExp]> = [
      ["", "from", /from is required/],
      ["?from=2026-03-01", "to", /to is required/],
      ["?from=2026-02-30&to=2026-03-02", "from", /from must be a date/],
      ["?from=2026-03-01&to=tomorrow", "to", /to must be a date/],
      ["?from=2026-03-05&to=2026-03-01", "to", /after from/],
      ["?from=2026-01-01&to=2026-06-01", "to", /at most 92 days/],
      ["?from=..%2F..%2Fetc%2Fpasswd&to=2026-03-01", "from", /from must be a date/],
      [`?from=${"9".repeat(100)}&to=2026-03-01`, "from", /./],
    ];
    for (const [query, field, message] of cases) {
      const res = await api("GET", `/api/calendar${query}`);
      expect(res.status, query).toBe(400);
      expect(res.json().error.code).toBe("invalid_request");
      expect(JSON.stringify(res.json().error), query).toContain(field);
      expect(res.json().error.message, query).toMatch(message);
    }
    const ok = await api("GET", "/api/calendar?from=2026-01-01T00:00:00%2B01:00&to=2026-04-02T23:00:00Z");
    expect(ok.status, ok.body).toBe(200);
  });

  it("needs the token", async () => {
    const res = await apiCall(daemon, "GET", "/api/calendar?from=2026-03-01&to=2026-03-02", undefined, null);
    expect(res.status).toBe(401);
  });
});
