import { chmodSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scriptedRouterYaml } from "../agent/helpers.ts";
import { api as apiCall, startDaemon, type TestDaemon, tempDataDir, until } from "../helpers/daemon.ts";
import { type ScriptedServer, startOpenAiServer } from "../llm/servers/openaiServer.ts";
import { runCli } from "../setup/helpers.ts";

// `assistant mission ...` and `assistant budget ...` against a real daemon and a scripted model server, and a
// hand-edited mission file applied by the running daemon without a restart.

let llm: ScriptedServer;
let daemon: TestDaemon;
let dataDir: string;
const missionFile = () => join(dataDir, "autonomous_mission.yaml");
const cli = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  runCli(args, { env: { ASSISTANT_DATA_DIR: dataDir, ...env } });
const mission = async () => (await apiCall(daemon, "GET", "/api/autonomous-mission", undefined, daemon.token)).json();

beforeAll(async () => {
  llm = await startOpenAiServer({ defaultBehaviour: { kind: "reply", text: "Cycle done." } });
  dataDir = tempDataDir("assistant-mission-cli-");
  writeFileSync(join(dataDir, "llm_router.yaml"), scriptedRouterYaml(llm.url));
  daemon = await startDaemon({ ASSISTANT_EMBEDDED_MODEL_PATH: join(dataDir, "none.gguf") }, dataDir);
});
afterAll(async () => {
  await daemon?.stop();
  await llm?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe("a hand-edited mission file", () => {
  it("applies without a restart: enabling it by hand starts cycles at the new interval", async () => {
    expect(await mission()).toMatchObject({ enabled: false, status_reason: "disabled" });
    writeFileSync(missionFile(), "objective: Draft the outline\nheartbeat_secs: 1\nenabled: true\n");
    // Without the reload the first heartbeat would come an hour after the start (the default interval).
    const running = await until(mission, (m) => m.cycles >= 1, 10_000);
    expect(running).toMatchObject({ enabled: true, heartbeat_secs: 1, objective: "Draft the outline" });

    writeFileSync(missionFile(), "objective: Draft the outline\nheartbeat_secs: 1\nenabled: false\n");
    const stopped = await until(mission, (m) => m.status === "idle" && m.status_reason === "disabled", 10_000);
    const cycles = stopped.cycles;
    await new Promise((r) => setTimeout(r, 2_500));
    expect((await mission()).cycles).toBe(cycles);
  });
});

describe("assistant mission", () => {
  it("status, pause and resume over the daemon, in words and as JSON", async () => {
    const status = await cli(["mission", "status"]);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain("mission idle (disabled)");
    expect(status.stdout).toContain("objective  Draft the outline");
    expect(status.stdout).toMatch(/cycles {5}\d+/);

    const paused = await cli(["mission", "pause"]);
    expect(paused.code, paused.stderr).toBe(0);
    expect(paused.stdout).toContain("Paused.");
    expect(paused.stdout).toContain("mission paused (operator)");
    expect(paused.stdout).toContain("assistant mission resume");
    expect((await mission()).status).toBe("paused");

    const again = await cli(["mission", "pause"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("already paused");

    const resumed = await cli(["mission", "resume", "--json"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.json()).toMatchObject({ status: "idle", status_reason: "disabled" });
  });

  it("edit opens $EDITOR on the file, then validates it: a good edit is applied, a bad one named", async () => {
    const editor = join(dataDir, "fake-editor.sh");
    // The "editor" replaces the file with what EDIT_TO says, as a person saving in their editor would.
    writeFileSync(editor, '#!/bin/sh\nprintf "%s\\n" "$EDIT_TO" > "$1"\n');
    chmodSync(editor, 0o755);

    const good = await cli(["mission", "edit"], {
      EDITOR: editor,
      EDIT_TO: "objective: Sort the inbox\nheartbeat_secs: 3600\nenabled: true",
    });
    expect(good.code, good.stderr).toBe(0);
    expect(good.stdout).toContain("is valid and applied");
    expect(good.stdout).toContain("objective  Sort the inbox");
    expect((await mission()).objective).toBe("Sort the inbox");

    const bad = await cli(["mission", "edit"], { EDITOR: editor, EDIT_TO: "enabled: true\nheartbeat_secs: soon" });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("autonomous_mission.yaml");
    expect(bad.stderr).toContain("heartbeat_secs");
    expect(bad.stderr).toContain("assistant mission edit");

    const failing = await cli(["mission", "edit"], { EDITOR: "false" });
    expect(failing.code).toBe(1);
    expect(failing.stderr).toContain("the editor `false` failed");
  });

  it("edit without a file starts from a commented starter, with no daemon needed", async () => {
    const fresh = tempDataDir("assistant-mission-edit-");
    try {
      const result = await runCli(["mission", "edit"], { env: { ASSISTANT_DATA_DIR: fresh, EDITOR: "true" } });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain("the daemon is not running");
      const text = readFileSync(join(fresh, "autonomous_mission.yaml"), "utf8");
      expect(text).toContain("# The autonomous mission");
      expect(text).toContain("enabled: false");
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }
  });
});

describe("assistant budget", () => {
  it("shows limits and usage, sets and clears limits, resets a session's usage", async () => {
    const chat = await cli(["chat", "hello"]); // a session with usage
    expect(chat.code, chat.stderr).toBe(0);
    const shown = await cli(["budget"]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain("tokens  -  (no limit)");
    expect(shown.stdout).toContain("SESSION");

    const set = await cli(["budget", "set", "--tokens", "50000", "--cost", "0.5"]);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toContain("tokens  50000  (set with `assistant budget set`)");
    expect(set.stdout).toContain("cost    $0.5");

    const cleared = await cli(["budget", "set", "--cost", "none", "--json"]);
    expect(cleared.code, cleared.stderr).toBe(0);
    expect(cleared.json()).toMatchObject({
      limits: { max_tokens_per_session: 50000, max_cost_per_session_usd: null },
      sources: { max_tokens_per_session: "api", max_cost_per_session_usd: "none" },
    });

    const session = (await cli(["budget", "--json"])).json().sessions[0].session_id;
    const reset = await cli(["budget", "reset", "--session", session]);
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.stdout).toContain(`Reset the usage of session ${session}`);
    const after = (await cli(["budget", "--json"])).json();
    expect(after.sessions.map((s: { session_id: string }) => s.session_id)).not.toContain(session);
  });

  it("bad input is a usage error naming the option, and nothing is sent", async () => {
    const before = (await cli(["budget", "--json"])).json().limits;
    for (const [args, said] of [
      [["budget", "set", "--tokens", "1.5"], "a whole number above 0, or none"],
      [["budget", "set", "--cost", "cheap"], "a number above 0, or none"],
      [["budget", "set"], "give --tokens and/or --cost"],
      [["budget", "reset"], "give either --session <id> or --all"],
    ] as const) {
      const result = await cli([...args]);
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.stderr).toContain(said);
    }
    expect((await cli(["budget", "show", "--json"])).json().limits).toEqual(before);
  });
});
