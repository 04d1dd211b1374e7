import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/configFiles.ts";
import { configError, tempData } from "./helpers.ts";

describe("agent_profile.json", () => {
  it("loads a valid profile", () => {
    const data = tempData();
    data.write(
      "agent_profile.json",
      JSON.stringify({
        name: "Ada",
        role: "Research aide",
        personality: "Dry wit",
        rules: ["Cite sources"],
        formality: "formal",
      }),
    );
    expect(loadConfig("agent_profile", data.paths)).toEqual({
      name: "Ada",
      role: "Research aide",
      personality: "Dry wit",
      rules: ["Cite sources"],
      formality: "formal",
    });
  });

  it("gives the default profile when the file is missing", () => {
    const profile = loadConfig("agent_profile", tempData().paths);
    expect(profile.name).toBe("Assistant");
    expect(profile.rules).toEqual([]);
    expect(profile.formality).toBeUndefined();
  });

  it.each([
    [{ formality: "casual" }, "formality", '"casual" is not allowed'],
    [{ rules: "be nice" }, "rules", "expected array, got string"],
    [{ rules: ["ok", 3] }, "rules[1]", "expected string, got number"],
    [{ name: "x", nickname: "y" }, "nickname", "unknown key"],
  ])("refuses %j", (content, key, reason) => {
    const data = tempData();
    const file = data.write("agent_profile.json", JSON.stringify(content));
    const error = configError(() => loadConfig("agent_profile", data.paths));
    expect(error.file).toBe(file);
    expect(error.key).toBe(key);
    expect(error.reason).toContain(reason);
  });

  it("names the line and column of a JSON syntax error", () => {
    const data = tempData();
    data.write("agent_profile.json", '{\n  "name": "Ada",\n}\n');
    const error = configError(() => loadConfig("agent_profile", data.paths));
    expect(error.key).toBe("line 3, column 1");
    expect(error.reason).toContain("JSON syntax error");
  });
});

describe("autonomous_mission.yaml", () => {
  it("loads a mission; search, code and schedule are accepted as task types", () => {
    for (const taskType of ["search", "code", "schedule", "research"]) {
      const data = tempData();
      data.write(
        "autonomous_mission.yaml",
        `objective: Watch the inbox\nheartbeat_secs: 900\nreport_dir: /tmp/r\nheartbeat_preferred_task_type: ${taskType}\nenabled: true\n`,
      );
      expect(loadConfig("autonomous_mission", data.paths)).toEqual({
        objective: "Watch the inbox",
        heartbeat_secs: 900,
        report_dir: "/tmp/r",
        heartbeat_preferred_task_type: taskType,
        enabled: true,
      });
    }
  });

  it("is a disabled mission when the file is missing", () => {
    const mission = loadConfig("autonomous_mission", tempData().paths);
    expect(mission.enabled).toBe(false);
    expect(mission.heartbeat_secs).toBeGreaterThan(0);
  });

  it.each([
    ["heartbeat_secs: 0\n", "heartbeat_secs"],
    ["heartbeat_secs: 1.5\n", "heartbeat_secs"],
    ['enabled: "yes"\n', "enabled"],
    ["enabled: true\n", "objective"],
    ["objective: x\ninterval: 5\n", "interval"],
  ])("refuses %j", (text, key) => {
    const data = tempData();
    data.write("autonomous_mission.yaml", text);
    expect(configError(() => loadConfig("autonomous_mission", data.paths)).key).toBe(key);
  });
});

describe("voice_router.yaml", () => {
  it("loads both URLs, each optional", () => {
    const data = tempData();
    data.write(
      "voice_router.yaml",
      "tts:\n  base_url: http://127.0.0.1:8765\nstt:\n  base_url: http://127.0.0.1:8766\n",
    );
    expect(loadConfig("voice_router", data.paths)).toEqual({
      tts: { base_url: "http://127.0.0.1:8765" },
      stt: { base_url: "http://127.0.0.1:8766" },
    });
    data.write("voice_router.yaml", "stt:\n  base_url: https://stt.example\n");
    expect(loadConfig("voice_router", data.paths)).toEqual({ stt: { base_url: "https://stt.example" } });
    expect(loadConfig("voice_router", tempData().paths)).toEqual({});
  });

  it.each([
    ["stt:\n  base_url: not a url\n", "stt.base_url"],
    ["stt:\n  url: http://x\n", "stt.url"],
    ["asr:\n  base_url: http://x\n", "asr"],
  ])("refuses %j", (text, key) => {
    const data = tempData();
    data.write("voice_router.yaml", text);
    expect(configError(() => loadConfig("voice_router", data.paths)).key).toBe(key);
  });
});
