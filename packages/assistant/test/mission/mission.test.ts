import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cycleTaskType } from "../../src/mission/missionFile.ts";
import { AppError } from "../../src/util/errors.ts";
import { createRig, type MissionRig, missionYaml, START } from "./helpers.ts";

// The mission service with a fake clock over a real data directory and SQLite: heartbeats, cycles, reports,
// pause and resume, persistence, aliases, budget, interim reports and a file broken while it runs.

const MINUTE = 60_000;
const ENABLED = {
  objective: "Tidy the notes folder",
  heartbeat_secs: 60,
  report_dir: "mission-reports",
  enabled: true,
};

let rig: MissionRig;
afterEach(() => rig?.close());

const reportJson = (cycle: number, interim = false) =>
  JSON.parse(
    readFileSync(
      join(
        rig.dataDir,
        "mission-reports",
        `mission-cycle-${String(cycle).padStart(4, "0")}${interim ? "-interim" : ""}.json`,
      ),
      "utf8",
    ),
  );

describe("heartbeats and cycles", () => {
  it("starts a cycle every heartbeat_secs as a mission task and writes its report", async () => {
    rig = createRig({ file: ENABLED });
    rig.mission.start();
    expect(rig.mission.view()).toMatchObject({
      status: "idle",
      status_reason: null,
      cycles: 0,
      next_heartbeat_at: new Date(START + MINUTE).toISOString(),
      report_dir_path: join(rig.dataDir, "mission-reports"),
    });

    await rig.clock.advance(MINUTE - 1);
    expect(rig.agent.submitted).toHaveLength(0);
    await rig.clock.advance(1);
    expect(rig.agent.submitted).toHaveLength(1);
    const [first] = rig.agent.submitted;
    expect(first).toMatchObject({ origin: "mission", taskType: "conversation" });
    expect(first!.sessionId).toBeUndefined();
    expect(first!.message).toContain("cycle 1");
    expect(first!.message).toContain("Objective: Tidy the notes folder");
    expect(first!.message).toContain("first cycle");
    expect(rig.mission.view()).toMatchObject({ status: "running", current_task_id: first!.task_id, cycles: 1 });

    rig.agent.finish(first!.task_id, { reply: "Sorted 12 notes into folders." });
    await rig.clock.advance(0);
    const view = rig.mission.view();
    expect(view).toMatchObject({ status: "idle", current_task_id: null, cycles: 1 });
    expect(view.last_cycle).toMatchObject({ cycle: 1, task_id: first!.task_id, status: "completed" });
    const report = reportJson(1);
    expect(report).toMatchObject({
      objective: "Tidy the notes folder",
      cycle: 1,
      interim: false,
      task_id: first!.task_id,
      status: "completed",
      reply: "Sorted 12 notes into folders.",
    });
    expect(report.done[0].text).toContain("Sorted 12 notes");
    expect(report).toHaveProperty("next_steps");
    const markdown = readFileSync(view.last_cycle!.report_path!, "utf8");
    expect(markdown).toContain("# Mission cycle 1");
    expect(markdown).toContain("Sorted 12 notes into folders.");
    expect(statSync(join(rig.dataDir, "mission-reports")).mode & 0o777).toBe(0o700);

    // The next cycle continues in the same session and hears how the previous one went.
    await rig.clock.advance(MINUTE);
    expect(rig.agent.submitted).toHaveLength(2);
    const second = rig.agent.submitted[1]!;
    expect(second.sessionId).toBe(view.session_id);
    expect(second.message).toContain("cycle 2");
    expect(second.message).toContain("Previous cycle (1): completed");
    expect(second.message).toContain("Sorted 12 notes into folders.");

    expect(rig.kinds("mission_heartbeat").map((e) => e.data)).toEqual([
      { cycle: 1, task_id: first!.task_id, task_type: "conversation" },
      { cycle: 2, task_id: second.task_id, task_type: "conversation" },
    ]);
    expect(rig.kinds("mission_cycle_finished").map((e) => e.data)).toEqual([
      { cycle: 1, task_id: first!.task_id, status: "completed", reason: null },
    ]);
    expect(rig.kinds("mission_report").map((e) => e.data)).toEqual([
      { cycle: 1, path: view.last_cycle!.report_path, interim: false },
    ]);
    expect(rig.kinds("mission_state_changed").map((e) => [e.data.previous, e.data.status])).toEqual([
      ["idle", "running"],
      ["running", "idle"],
      ["idle", "running"],
    ]);
  });

  it("never overlaps cycles: heartbeats during a cycle wait for it and start one cycle when it ends", async () => {
    rig = createRig({ file: ENABLED });
    rig.mission.start();
    await rig.clock.advance(MINUTE);
    const first = rig.agent.lastTask();
    await rig.clock.advance(5 * MINUTE);
    expect(rig.agent.submitted).toHaveLength(1);
    expect(rig.mission.view().status).toBe("running");

    rig.agent.finish(first);
    await rig.clock.advance(0);
    expect(rig.agent.submitted).toHaveLength(2); // the waiting heartbeat, once
    expect(rig.mission.view()).toMatchObject({ status: "running", cycles: 2 });
    expect(rig.agent.tasks.get(first).status).toBe("completed");
  });

  it("runs nothing while the mission is disabled or enabled without an objective", async () => {
    rig = createRig({ file: { ...ENABLED, enabled: false } });
    rig.mission.start();
    expect(rig.mission.view()).toMatchObject({ status: "idle", status_reason: "disabled" });
    await rig.clock.advance(5 * MINUTE);
    expect(rig.agent.submitted).toHaveLength(0);

    // An enabled mission without an objective is an invalid file: nothing runs either.
    writeFileSync(rig.paths.mission, missionYaml({ objective: "  ", heartbeat_secs: 60, enabled: true }));
    expect(rig.mission.view()).toMatchObject({
      status: "idle",
      status_reason: "config_invalid",
      error: { key: "objective" },
    });
    await rig.clock.advance(5 * MINUTE);
    expect(rig.agent.submitted).toHaveLength(0);

    // A hand edit that enables it applies at the next heartbeat, without a restart.
    writeFileSync(rig.paths.mission, missionYaml(ENABLED));
    await rig.clock.advance(MINUTE);
    expect(rig.agent.submitted).toHaveLength(1);
  });

  it("resolves heartbeat_preferred_task_type through the routing aliases", async () => {
    expect(cycleTaskType({ ...ENABLED, heartbeat_preferred_task_type: "code" })).toBe("code_generation");
    expect(cycleTaskType({ ...ENABLED, heartbeat_preferred_task_type: "search" })).toBe("conversation");
    expect(cycleTaskType({ ...ENABLED, heartbeat_preferred_task_type: "schedule" })).toBe("conversation");
    expect(cycleTaskType({ ...ENABLED, heartbeat_preferred_task_type: "data_analysis" })).toBe("data_analysis");
    expect(cycleTaskType({ ...ENABLED })).toBe("conversation");

    rig = createRig({ file: { ...ENABLED, heartbeat_preferred_task_type: "code" } });
    rig.mission.start();
    expect(rig.mission.view().task_type).toBe("code_generation");
    await rig.clock.advance(MINUTE);
    expect(rig.agent.submitted[0]!.taskType).toBe("code_generation");
    expect(rig.kinds("mission_heartbeat")[0]!.data.task_type).toBe("code_generation");
  });
});

describe("pause and resume", () => {
  it("lets the running cycle finish with its report, starts no new ones, and resumes from now", async () => {
    rig = createRig({ file: ENABLED });
    rig.mission.start();
    await rig.clock.advance(MINUTE);
    const running = rig.agent.lastTask();

    expect(rig.mission.pause()).toMatchObject({
      status: "paused",
      status_reason: "operator",
      current_task_id: running,
      next_heartbeat_at: null,
    });
    expect(() => rig.mission.pause()).toThrow(/already paused/);
    await rig.clock.advance(3 * MINUTE);
    expect(rig.agent.submitted).toHaveLength(1);

    rig.agent.finish(running, { reply: "Finished while paused." });
    await rig.clock.advance(0);
    expect(rig.mission.view()).toMatchObject({ status: "paused", current_task_id: null });
    expect(reportJson(1)).toMatchObject({ status: "completed", reply: "Finished while paused." });
    expect(rig.kinds("mission_cycle_finished")).toHaveLength(1);
    await rig.clock.advance(10 * MINUTE);
    expect(rig.agent.submitted).toHaveLength(1);

    const resumedAt = rig.clock.current;
    expect(rig.mission.resume()).toMatchObject({
      status: "idle",
      status_reason: null,
      next_heartbeat_at: new Date(resumedAt + MINUTE).toISOString(),
    });
    let conflict: unknown;
    try {
      rig.mission.resume();
    } catch (error) {
      conflict = error;
    }
    expect(conflict).toBeInstanceOf(AppError);
    expect((conflict as AppError).code).toBe("conflict");
    await rig.clock.advance(MINUTE - 1);
    expect(rig.agent.submitted).toHaveLength(1);
    await rig.clock.advance(1);
    expect(rig.agent.submitted).toHaveLength(2);
    expect(rig.kinds("mission_state_changed").map((e) => [e.data.status, e.data.reason])).toEqual([
      ["running", null],
      ["paused", "operator"],
      ["idle", null],
      ["running", null],
    ]);
  });

  it("resuming while the cycle still runs goes back to running", async () => {
    rig = createRig({ file: ENABLED });
    rig.mission.start();
    await rig.clock.advance(MINUTE);
    rig.mission.pause();
    expect(rig.mission.resume().status).toBe("running");
  });

  it("stays paused across a restart (a new service over the same database)", async () => {
    rig = createRig({ file: ENABLED });
    rig.mission.start();
    await rig.clock.advance(MINUTE);
    rig.agent.finish(rig.agent.lastTask());
    await rig.clock.advance(0);
    rig.mission.pause();

    const restarted = rig.restart();
    restarted.start();
    expect(restarted.view()).toMatchObject({ status: "paused", status_reason: "operator", cycles: 1 });
    await rig.clock.advance(10 * MINUTE);
    expect(rig.agent.submitted).toHaveLength(1);
    restarted.resume();
    await rig.clock.advance(MINUTE);
    expect(rig.agent.submitted).toHaveLength(2);
    expect(rig.agent.submitted[1]!.message).toContain("cycle 2");
  });

  it("records a cycle the daemon's death interrupted at the next start", async () => {
    rig = createRig({ file: ENABLED });
    rig.mission.start();
    await rig.clock.advance(MINUTE);
    const lost = rig.agent.lastTask();
    // What TaskService.recover() does to a task that was running when the daemon died.
    rig.agent.tasks.transition(lost, "failed", { reason: "interrupted" });

    const restarted = rig.restart();
    restarted.start();
    expect(restarted.view()).toMatchObject({ status: "idle", current_task_id: null });
    expect(restarted.view().last_cycle).toMatchObject({
      cycle: 1,
      task_id: lost,
      status: "failed",
      reason: "interrupted",
    });
    expect(reportJson(1)).toMatchObject({ status: "failed", reason: "interrupted" });
    expect(reportJson(1).failed[0].text).toContain("Interrupted");
    expect(rig.kinds("mission_cycle_finished").at(-1)!.data).toEqual({
      cycle: 1,
      task_id: lost,
      status: "failed",
      reason: "interrupted",
    });
  });
});

describe("budget", () => {
  it("pauses with reason budget and emits budget_exhausted when the session budget is spent", async () => {
    rig = createRig({ file: ENABLED, env: { ASSISTANT_MAX_TOKENS_PER_SESSION: "100" } });
    rig.mission.start();
    await rig.clock.advance(MINUTE);
    rig.agent.finish(rig.agent.lastTask());
    await rig.clock.advance(0);
    const sessionId = rig.mission.view().session_id!;
    rig.budget.add(sessionId, { input: 90, output: 20 }, 0);

    await rig.clock.advance(MINUTE);
    expect(rig.agent.submitted).toHaveLength(1);
    const view = rig.mission.view();
    expect(view).toMatchObject({ status: "paused", status_reason: "budget", next_heartbeat_at: null });
    expect(view.status_message).toContain("POST /api/budget");
    const [exhausted] = rig.kinds("budget_exhausted");
    expect(exhausted!.data).toMatchObject({ source: "mission", session_id: sessionId });
    expect(exhausted!.data.message).toContain("POST /api/budget/reset-session");
    expect(exhausted!.data.message).toContain("110 tokens");
    expect(rig.kinds("mission_state_changed").at(-1)!.data).toEqual({
      status: "paused",
      previous: "idle",
      reason: "budget",
    });
    await rig.clock.advance(10 * MINUTE);
    expect(rig.agent.submitted).toHaveLength(1);

    rig.budget.resetSession(sessionId);
    rig.mission.resume();
    await rig.clock.advance(MINUTE);
    expect(rig.agent.submitted).toHaveLength(2);
  });

  it("pauses when a cycle fails with budget_exceeded, after recording the cycle", async () => {
    rig = createRig({ file: ENABLED });
    rig.mission.start();
    await rig.clock.advance(MINUTE);
    const task = rig.agent.lastTask();
    rig.agent.finish(task, {
      error: new AppError("budget_exceeded", "this session used 500 tokens, its budget is 400"),
    });
    await rig.clock.advance(0);
    expect(rig.mission.view()).toMatchObject({ status: "paused", status_reason: "budget" });
    expect(reportJson(1)).toMatchObject({ status: "failed" });
    expect(rig.kinds("budget_exhausted")).toHaveLength(1);
    await rig.clock.advance(5 * MINUTE);
    expect(rig.agent.submitted).toHaveLength(1);
  });
});

describe("reports while a cycle runs", () => {
  it("writes an interim report of what the cycle did so far, every period, until it ends", async () => {
    rig = createRig({ file: ENABLED, env: { ASSISTANT_MISSION_INTERIM_REPORT_SECS: "1" } });
    rig.mission.start();
    await rig.clock.advance(MINUTE);
    const task = rig.agent.tasks.get(rig.agent.lastTask());
    const scope = { task_id: task.id, session_id: task.session_id };
    rig.events.emit("message_delta", { round: 1, text: "Listing the folder first.", provider: "p", model: "m" }, scope);
    rig.events.emit(
      "tool_call_requested",
      { call_id: "c1", tool: "list_dir", arguments_summary: '{"path":"/notes"}' },
      scope,
    );
    rig.events.emit(
      "tool_call_completed",
      {
        call_id: "c1",
        tool: "list_dir",
        status: "ok",
        rule: null,
        queue_item_id: null,
        truncated: false,
        duration_ms: 3,
        output_preview: "a.txt b.txt",
      },
      scope,
    );

    await rig.clock.advance(999);
    expect(existsSync(join(rig.dataDir, "mission-reports", "mission-cycle-0001-interim.json"))).toBe(false);
    await rig.clock.advance(1);
    const interim = reportJson(1, true);
    expect(interim).toMatchObject({ interim: true, cycle: 1, status: "running", reply: "Listing the folder first." });
    expect(interim.done[0].text).toContain("list_dir /notes");
    await rig.clock.advance(2000);
    expect(rig.kinds("mission_report").map((e) => e.data.interim)).toEqual([true, true, true]);
    expect(readFileSync(join(rig.dataDir, "mission-reports", "mission-cycle-0001-interim.md"), "utf8")).toContain(
      "interim: still running",
    );

    rig.agent.finish(task.id, { reply: "Done listing." });
    await rig.clock.advance(5000);
    expect(rig.kinds("mission_report").map((e) => e.data.interim)).toEqual([true, true, true, false]);
  });
});

describe("the file", () => {
  it("stops with an event when the file becomes invalid mid-run, and runs again once it is fixed", async () => {
    rig = createRig({ file: ENABLED });
    rig.mission.start();
    await rig.clock.advance(MINUTE);
    rig.agent.finish(rig.agent.lastTask());
    await rig.clock.advance(0);

    writeFileSync(rig.paths.mission, "objective: Tidy\nenabled: true\nheartbeat_secs: abc\n");
    await rig.clock.advance(MINUTE);
    expect(rig.agent.submitted).toHaveLength(1);
    const view = rig.mission.view();
    expect(view).toMatchObject({
      status: "idle",
      status_reason: "config_invalid",
      objective: null,
      error: { file: rig.paths.mission, key: "heartbeat_secs" },
    });
    expect(view.status_message).toContain("autonomous_mission.yaml");
    expect(rig.kinds("mission_state_changed").at(-1)!.data).toEqual({
      status: "idle",
      previous: "idle",
      reason: "config_invalid",
    });

    writeFileSync(rig.paths.mission, missionYaml(ENABLED));
    await rig.clock.advance(MINUTE);
    expect(rig.agent.submitted).toHaveLength(2);
    expect(rig.mission.view().error).toBeNull();
  });

  it("applies a hand edit as soon as the file changes: enabling and a shorter interval count from the edit", async () => {
    rig = createRig(); // no file: a disabled mission, its heartbeat an hour away
    rig.mission.start();
    expect(rig.mission.view().next_heartbeat_at).toBe(new Date(START + 60 * MINUTE).toISOString());
    await rig.clock.advance(5 * MINUTE);

    writeFileSync(rig.paths.mission, missionYaml(ENABLED));
    rig.mission.view(); // a GET reading the new file before the watcher fires must not hide the change
    rig.fileChanged();
    expect(rig.kinds("mission_updated").at(-1)!.data.fields).toEqual(
      expect.arrayContaining(["objective", "heartbeat_secs", "report_dir", "enabled"]),
    );
    expect(rig.mission.view()).toMatchObject({
      enabled: true,
      status: "idle",
      status_reason: null,
      next_heartbeat_at: new Date(START + 6 * MINUTE).toISOString(),
    });
    await rig.clock.advance(MINUTE);
    expect(rig.agent.submitted).toHaveLength(1);
    expect(rig.agent.submitted[0]!.message).toContain("Tidy the notes folder");

    // The file rewritten with the same values (an editor saving without changes) is no update.
    const updates = rig.kinds("mission_updated").length;
    writeFileSync(rig.paths.mission, `# saved again\n${missionYaml(ENABLED)}`);
    rig.fileChanged();
    expect(rig.kinds("mission_updated")).toHaveLength(updates);

    writeFileSync(rig.paths.mission, missionYaml({ ...ENABLED, enabled: false }));
    rig.fileChanged();
    expect(rig.mission.view()).toMatchObject({ status: "running", enabled: false });
    rig.agent.finish(rig.agent.lastTask());
    await rig.clock.advance(10 * MINUTE);
    expect(rig.agent.submitted).toHaveLength(1);
    expect(rig.mission.view()).toMatchObject({ status: "idle", status_reason: "disabled" });
  });

  it("merges keys into the file, keeping comments, and refuses bad values and unknown keys without writing", () => {
    rig = createRig();
    writeFileSync(
      rig.paths.mission,
      "# my mission, keep this comment\nobjective: Old\nheartbeat_secs: 60 # hourly later\n",
    );
    rig.mission.start();
    const view = rig.mission.update({ objective: "New goal", enabled: true, heartbeat_preferred_task_type: "search" });
    expect(view).toMatchObject({ objective: "New goal", enabled: true, heartbeat_secs: 60, task_type: "conversation" });
    const text = readFileSync(rig.paths.mission, "utf8");
    expect(text).toContain("# my mission, keep this comment");
    expect(text).toContain("# hourly later");
    expect(rig.kinds("mission_updated").map((e) => e.data.fields)).toEqual([
      ["objective", "enabled", "heartbeat_preferred_task_type"],
    ]);
    expect(view.next_heartbeat_at).toBe(new Date(START + MINUTE).toISOString());

    for (const [changes, field] of [
      [{ heartbeat_secs: 0 }, "heartbeat_secs"],
      [{ heartbeat_secs: "abc" }, "heartbeat_secs"],
      [{ colour: "blue" }, "colour"],
      [{ objective: "" }, "objective"], // enabled with an empty objective
    ] as const) {
      let error: unknown;
      try {
        rig.mission.update(changes);
      } catch (caught) {
        error = caught;
      }
      expect(error, JSON.stringify(changes)).toBeInstanceOf(AppError);
      expect((error as AppError).code).toBe("invalid_request");
      expect((error as AppError).details?.field).toBe(field);
    }
    expect(readFileSync(rig.paths.mission, "utf8")).toBe(text);
    expect(rig.kinds("mission_updated")).toHaveLength(1);

    // null removes a key: its default applies again.
    expect(rig.mission.update({ heartbeat_preferred_task_type: null }).heartbeat_preferred_task_type).toBeNull();
  });

  it("refuses thousands of unknown keys at once, before any YAML work (they used to stall the daemon)", () => {
    rig = createRig();
    writeFileSync(rig.paths.mission, "objective: Old\n");
    rig.mission.start();
    const changes = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, i]));
    const started = Date.now();
    let error: unknown;
    try {
      rig.mission.update({ objective: "New", ...changes });
    } catch (caught) {
      error = caught;
    }
    expect(Date.now() - started).toBeLessThan(500);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).details?.field).toBe("k0");
    expect((error as AppError).message).toContain("k0: unknown key (and 4999 more) (known keys: objective,");
    expect(readFileSync(rig.paths.mission, "utf8")).toBe("objective: Old\n");
  });
});
