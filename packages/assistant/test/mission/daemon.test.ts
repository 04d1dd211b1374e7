import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/store/database.ts";
import { scriptedRouterYaml } from "../agent/helpers.ts";
import { api as apiCall, raw, startDaemon, type TestDaemon, tempDataDir, until } from "../helpers/daemon.ts";
import { type ScriptedServer, startOpenAiServer } from "../llm/servers/openaiServer.ts";

// The mission end to end: a real daemon with heartbeat_secs 1 runs cycles against a scripted OpenAI-protocol
// model, writes reports into report_dir, pauses (the running cycle finishes, nothing new starts) and resumes;
// PUT takes JSON and YAML and keeps the file's comments; bad input is a 400 naming the field, with nothing written.

let llm: ScriptedServer;
let daemon: TestDaemon;
let dataDir: string;
const missionFile = () => join(dataDir, "autonomous_mission.yaml");
const api = (method: string, path: string, body?: unknown) => apiCall(daemon, method, path, body, daemon.token);
const mission = async () => (await api("GET", "/api/autonomous-mission")).json();
const putYaml = (text: string, type = "application/yaml") =>
  raw(`${daemon.url}/api/autonomous-mission`, {
    method: "PUT",
    headers: { authorization: `Bearer ${daemon.token}`, "content-type": type },
    body: text,
  });

const missionMessages = () =>
  llm.requests
    .filter((r) => r.path.endsWith("/chat/completions"))
    .map((r) => r.body as { model: string; messages: Array<{ role: string; content: unknown }> })
    .filter((b) => JSON.stringify(b.messages.at(-1)).includes("[Autonomous mission, cycle"));

beforeAll(async () => {
  llm = await startOpenAiServer({ defaultBehaviour: { kind: "reply", text: "Mission step done: wrote the outline." } });
  dataDir = tempDataDir("assistant-mission-daemon-");
  writeFileSync(
    join(dataDir, "llm_router.yaml"),
    scriptedRouterYaml(llm.url, { conversation: "chat-model", code_generation: "code-model" }),
  );
  writeFileSync(missionFile(), "# my mission: keep this comment\nenabled: false # off until PUT\n");
  daemon = await startDaemon(
    { ASSISTANT_EMBEDDED_MODEL_PATH: join(dataDir, "none.gguf"), ASSISTANT_MISSION_INTERIM_REPORT_SECS: "1" },
    dataDir,
  );
});
afterAll(async () => {
  await daemon?.stop();
  await llm?.close();
});

describe("mission over HTTP", () => {
  it("refuses bad input with a 400 naming the field and writes nothing", async () => {
    const before = readFileSync(missionFile(), "utf8");
    const cases: Array<[Promise<Awaited<ReturnType<typeof api>>>, string]> = [
      [api("PUT", "/api/autonomous-mission", { colour: "blue" }), "colour"],
      [api("PUT", "/api/autonomous-mission", { heartbeat_secs: 0 }), "heartbeat_secs"],
      [api("PUT", "/api/autonomous-mission", { heartbeat_secs: "abc" }), "heartbeat_secs"],
      [api("PUT", "/api/autonomous-mission", { enabled: true }), "objective"], // enabled needs an objective
      [api("PUT", "/api/autonomous-mission", {}), "body"],
      [api("PUT", "/api/autonomous-mission", [1, 2]), "body"],
      [putYaml("heartbeat_secs: abc\n"), "heartbeat_secs"],
      [putYaml("objective: [unclosed\nenabled: true\n"), "body"],
      [api("GET", "/api/autonomous-mission/events?since=yesterday"), "query.since"],
      [api("GET", "/api/autonomous-mission/events?since=2026-02-30T10:00:00Z"), "query.since"],
      [api("GET", "/api/autonomous-mission/events?limit=0"), "query.limit"],
      [api("GET", "/api/autonomous-mission/events?limit=501"), "query.limit"],
      [api("GET", "/api/autonomous-mission/events?limit=x"), "query.limit"],
    ];
    for (const [pending, field] of cases) {
      const res = await pending;
      expect(res.status, `${field}: ${res.body}`).toBe(400);
      expect(res.json().error.code).toBe("invalid_request");
      expect(res.json().error.details.field).toBe(field);
    }
    const badYaml = await putYaml("objective: [unclosed\nenabled: true\n");
    expect(badYaml.json().error.message).toMatch(/line \d+/);
    const unknown = await api("PUT", "/api/autonomous-mission", { colour: "blue" });
    expect(unknown.json().error.message).toContain("autonomous_mission.yaml");
    // The body size limit (ASSISTANT_MAX_BODY_BYTES, 1 MiB by default) applies to YAML too.
    const huge = await putYaml(`objective: ${"x".repeat(1_100_000)}\n`);
    expect(huge.status).toBe(413);
    expect(readFileSync(missionFile(), "utf8")).toBe(before);

    // YAML bodies are for this route only.
    const elsewhere = await raw(`${daemon.url}/api/vault`, {
      method: "PUT",
      headers: { authorization: `Bearer ${daemon.token}`, "content-type": "application/yaml" },
      body: "key: a\nvalue: b\n",
    });
    expect(elsewhere.status).toBe(415);
    expect((await mission()).cycles).toBe(0);
  });

  it("PUT (JSON) enables the mission: heartbeats run cycles against the model and write reports", async () => {
    const res = await api("PUT", "/api/autonomous-mission", {
      objective: "Draft the project outline",
      heartbeat_secs: 1,
      report_dir: "mission-out",
      enabled: true,
    });
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({
      objective: "Draft the project outline",
      heartbeat_secs: 1,
      enabled: true,
      report_dir: "mission-out",
      report_dir_path: join(dataDir, "mission-out"),
      heartbeat_preferred_task_type: null,
      task_type: "conversation",
    });
    expect(["idle", "running"]).toContain(res.json().status);
    expect(res.json().next_heartbeat_at).not.toBeNull();
    const text = readFileSync(missionFile(), "utf8");
    expect(text).toContain("# my mission: keep this comment");
    expect(text).toContain("# off until PUT");

    const done = await until(mission, (m) => m.last_cycle?.cycle >= 2);
    expect(done.session_id).toBeTruthy();
    expect(done.last_cycle.status).toBe("completed");
    const report = JSON.parse(readFileSync(join(dataDir, "mission-out", "mission-cycle-0001.json"), "utf8"));
    expect(report).toMatchObject({
      objective: "Draft the project outline",
      cycle: 1,
      interim: false,
      status: "completed",
      reply: "Mission step done: wrote the outline.",
      session_id: done.session_id,
    });
    expect(report.done[0].text).toContain("Mission step done");
    expect(readFileSync(join(dataDir, "mission-out", "mission-cycle-0001.md"), "utf8")).toContain("# Mission cycle 1");
    const task = (await api("GET", `/api/tasks/${report.task_id}`)).json();
    expect(task).toMatchObject({ origin: "mission", task_type: "conversation", session_id: done.session_id });

    const sent = missionMessages();
    expect(sent.length).toBeGreaterThanOrEqual(2);
    expect(sent[0]!.model).toBe("chat-model");
    expect(JSON.stringify(sent[0]!.messages.at(-1))).toContain("Draft the project outline");
    // The second cycle runs in the same session: the first cycle's answer is in its history.
    expect(JSON.stringify(sent[1]!.messages)).toContain("Mission step done: wrote the outline.");
    expect(JSON.stringify(sent[1]!.messages.at(-1))).toContain("Previous cycle (1): completed");
  });

  it("PUT with a YAML body merges keys, keeps the comments and applies at once", async () => {
    const res = await putYaml(
      "# a comment in the request is not copied\nheartbeat_preferred_task_type: code\n",
      "text/yaml",
    );
    expect(res.status, res.body).toBe(200);
    expect(res.json()).toMatchObject({ heartbeat_preferred_task_type: "code", task_type: "code_generation" });
    const text = readFileSync(missionFile(), "utf8");
    expect(text).toContain("# my mission: keep this comment");
    expect(text).toContain("heartbeat_preferred_task_type: code");
    await until(
      async () => missionMessages().at(-1)?.model,
      (model) => model === "code-model",
    );
  });

  it("refuses a heartbeat_preferred_task_type the router does not know, with the close match, in a PUT and by hand", async () => {
    const before = readFileSync(missionFile(), "utf8");
    const res = await api("PUT", "/api/autonomous-mission", { heartbeat_preferred_task_type: "code_generatoin" });
    expect(res.status).toBe(400);
    expect(res.json().error.message).toContain('unknown task type "code_generatoin" (did you mean "code_generation"?)');
    expect(readFileSync(missionFile(), "utf8")).toBe(before);
    // A hand edit with the typo: the mission reports the file's problem instead of routing cycles as conversation.
    const typo = before.replace(
      /^heartbeat_preferred_task_type:.*$/m,
      "heartbeat_preferred_task_type: code_generatoin",
    );
    expect(typo).toContain("code_generatoin");
    try {
      writeFileSync(missionFile(), typo);
      await until(mission, (m) => m.error?.key === "heartbeat_preferred_task_type");
      expect((await mission()).error.reason).toContain('did you mean "code_generation"?');
    } finally {
      writeFileSync(missionFile(), before);
    }
    await until(mission, (m) => m.error === null);
  });

  it("pause lets the running cycle finish (with interim and final reports) and starts no new one; resume continues", async () => {
    llm.setDefault({ kind: "reply", text: "Slow step: one two three four five six seven eight.", chunkDelayMs: 250 });
    // A cycle that starts from now on gets the slow reply (about 2.5 s, longer than the 1 s interim period).
    const before = (await mission()).cycles;
    const running = await until(mission, (m) => m.status === "running" && m.current_cycle > before);
    const slow = running.current_task_id as string;
    const paused = await api("POST", "/api/autonomous-mission/pause");
    expect(paused.status).toBe(200);
    expect(paused.json()).toMatchObject({ status: "paused", status_reason: "operator", next_heartbeat_at: null });
    const again = await api("POST", "/api/autonomous-mission/pause");
    expect(again.status).toBe(409);
    expect(again.json().error.code).toBe("conflict");

    const finished = await until(mission, (m) => m.last_cycle?.task_id === slow);
    expect(finished).toMatchObject({ status: "paused", current_task_id: null });
    expect(finished.last_cycle.status).toBe("completed");
    const cycles = finished.cycles;
    expect(existsSync(finished.last_cycle.report_path)).toBe(true);
    const interimFile = join(
      dataDir,
      "mission-out",
      `mission-cycle-${String(finished.last_cycle.cycle).padStart(4, "0")}-interim.json`,
    );
    expect(JSON.parse(readFileSync(interimFile, "utf8"))).toMatchObject({
      interim: true,
      task_id: slow,
      status: "running",
    });

    // Nothing new while paused, though heartbeat_secs is 1.
    await new Promise((r) => setTimeout(r, 2_000));
    const still = await mission();
    expect(still).toMatchObject({ status: "paused", cycles });
    const tasks = (await api("GET", "/api/tasks?limit=500")).json().items as Array<{ origin: string; status: string }>;
    expect(
      tasks.filter((t) => t.origin === "mission" && !["completed", "failed", "cancelled"].includes(t.status)),
    ).toEqual([]);

    llm.setDefault({ kind: "reply", text: "Resumed step done." });
    const resumed = await api("POST", "/api/autonomous-mission/resume");
    expect(resumed.status).toBe(200);
    expect(resumed.json()).toMatchObject({ status: "idle", status_reason: null });
    expect((await api("POST", "/api/autonomous-mission/resume")).status).toBe(409);
    await until(mission, (m) => m.cycles > cycles && m.last_cycle.cycle > cycles);
  });

  it("GET events filters by limit and since, newest first", async () => {
    const all = (await api("GET", "/api/autonomous-mission/events?limit=500")).json();
    const kinds = new Set(all.items.map((e: { kind: string }) => e.kind));
    for (const kind of [
      "mission_updated",
      "mission_state_changed",
      "mission_heartbeat",
      "mission_cycle_finished",
      "mission_report",
    ]) {
      expect(kinds.has(kind), kind).toBe(true);
    }
    const ids = all.items.map((e: { id: string }) => Number(e.id));
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    expect(all.items.some((e: { data: { interim?: boolean } }) => e.data.interim === true)).toBe(true);

    const page = (await api("GET", "/api/autonomous-mission/events?limit=3")).json();
    expect(page.items).toHaveLength(3);
    expect(page.next_cursor).not.toBeNull();
    const next = (await api("GET", `/api/autonomous-mission/events?limit=3&cursor=${page.next_cursor}`)).json();
    expect(Number(next.items[0].id)).toBeLessThan(Number(page.items[2].id));

    const pivot = all.items[Math.floor(all.items.length / 2)];
    const since = (await api("GET", `/api/autonomous-mission/events?limit=500&since=${pivot.ts}`)).json();
    expect(since.items.length).toBeGreaterThan(0);
    expect(since.items.length).toBeLessThan(all.items.length + 1);
    expect(since.items.every((e: { ts: string }) => e.ts >= pivot.ts)).toBe(true);
    // The same instant written with an offset.
    const local = new Date(Date.parse(pivot.ts) + 2 * 3_600_000).toISOString().replace("Z", "+02:00");
    const offset = (
      await api("GET", `/api/autonomous-mission/events?limit=500&since=${encodeURIComponent(local)}`)
    ).json();
    expect(offset.items.map((e: { id: string }) => e.id)).toEqual(since.items.map((e: { id: string }) => e.id));
    const future = (await api("GET", "/api/autonomous-mission/events?since=2999-01-01T00:00:00Z")).json();
    expect(future).toEqual({ items: [], next_cursor: null });

    // The stored events agree: every mission_report names a file that exists.
    const db = openDatabase(join(dataDir, "assistant.db"), { readonly: true });
    try {
      const reports = db.prepare("SELECT data FROM events WHERE kind = 'mission_report'").all() as Array<{
        data: string;
      }>;
      expect(reports.length).toBeGreaterThan(0);
      for (const row of reports) expect(existsSync(JSON.parse(row.data).path)).toBe(true);
    } finally {
      db.close();
    }
  });

  it("is described in the OpenAPI document", async () => {
    const doc = (await api("GET", "/api/openapi.json")).json();
    for (const path of [
      "/api/autonomous-mission",
      "/api/autonomous-mission/pause",
      "/api/autonomous-mission/resume",
      "/api/autonomous-mission/events",
    ]) {
      expect(doc.paths, path).toHaveProperty([path]);
    }
  });

  it("a paused mission stays paused after a daemon restart", async () => {
    await until(mission, (m) => m.status !== "running");
    expect((await api("POST", "/api/autonomous-mission/pause")).status).toBe(200);
    const { cycles } = await mission();
    expect(await daemon.stop()).toBe(0);
    daemon = await startDaemon(
      { ASSISTANT_EMBEDDED_MODEL_PATH: join(dataDir, "none.gguf"), ASSISTANT_MISSION_INTERIM_REPORT_SECS: "1" },
      dataDir,
    );
    expect(await mission()).toMatchObject({ status: "paused", status_reason: "operator", cycles, enabled: true });
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await mission()).cycles).toBe(cycles);
  });
});
