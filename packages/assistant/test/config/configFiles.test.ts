import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  CONFIG_FILES,
  CONFIG_IDS,
  configFilePath,
  loadConfig,
  validateConfigFiles,
} from "../../src/config/configFiles.ts";
import { validateConfigFiles as fromValidate } from "../../src/config/validate.ts";
import { MAX_CONFIG_BYTES } from "../../src/util/fileText.ts";
import { configError, tempData } from "./helpers.ts";

describe("config file registry", () => {
  it("declares each file once with its format and data-directory location", () => {
    const data = tempData();
    expect(CONFIG_IDS.map((id) => CONFIG_FILES[id].fileName).sort()).toEqual([
      "agent_profile.json",
      "autonomous_mission.yaml",
      "llm_router.yaml",
      "tools_policy.yaml",
      "voice_router.yaml",
    ]);
    for (const id of CONFIG_IDS) {
      expect(configFilePath(id, data.paths, { projectRoot: data.projectRoot })).toBe(
        join(data.paths.dataDir, CONFIG_FILES[id].fileName),
      );
    }
  });

  it("reads the router from the project root when the data directory has none", () => {
    const data = tempData();
    const inProject = join(data.projectRoot, "llm_router.yaml");
    writeFileSync(inProject, "task_types:\n  t:\n    primary: { provider: cloud_a, model: from-project }\n");
    expect(configFilePath("llm_router", data.paths, { projectRoot: data.projectRoot })).toBe(inProject);
    const router = loadConfig("llm_router", data.paths, { projectRoot: data.projectRoot });
    expect(router.task_types.t?.primary.model).toBe("from-project");
    data.write("llm_router.yaml", "task_types:\n  t:\n    primary: { provider: cloud_a, model: from-data }\n");
    expect(loadConfig("llm_router", data.paths, { projectRoot: data.projectRoot }).task_types.t?.primary.model).toBe(
      "from-data",
    );
  });
});

describe("loadConfig errors", () => {
  it("names the line and column of a YAML syntax error", () => {
    const data = tempData();
    const file = data.write("tools_policy.yaml", "allowed_read_paths:\n  - /a\n bad: [\n");
    const error = configError(() => loadConfig("tools_policy", data.paths));
    expect(error.file).toBe(file);
    expect(error.key).toMatch(/^line \d+, column \d+$/);
    expect(error.reason).toMatch(/^YAML syntax error: /);
    expect(error.message).toContain(file);
  });

  it("refuses duplicate keys and multiple documents", () => {
    const data = tempData();
    data.write("voice_router.yaml", "stt: {}\nstt: {}\n");
    expect(configError(() => loadConfig("voice_router", data.paths)).key).toBe("line 2, column 1");
    data.write("voice_router.yaml", "stt: {}\n---\ntts: {}\n");
    expect(configError(() => loadConfig("voice_router", data.paths)).reason).toContain("multiple documents");
  });

  it("refuses a top level that is not a mapping", () => {
    const data = tempData();
    data.write("llm_router.yaml", "- conversation\n");
    const error = configError(() => loadConfig("llm_router", data.paths, { projectRoot: data.projectRoot }));
    expect(error.key).toBe("");
    expect(error.reason).toBe("expected object, got a list");
  });

  it("refuses a file larger than 1 MiB before parsing it", () => {
    const data = tempData();
    const file = data.write("tools_policy.yaml", `# ${"x".repeat(MAX_CONFIG_BYTES)}\n`);
    const error = configError(() => loadConfig("tools_policy", data.paths));
    expect(error.file).toBe(file);
    expect(error.reason).toContain("1 MiB");
    const report = validateConfigFiles(data.paths, { projectRoot: data.projectRoot }).find(
      (r) => r.id === "tools_policy",
    );
    expect(report?.status).toBe("invalid");
  });

  it("accepts a file of exactly 1 MiB", () => {
    const data = tempData();
    data.write("tools_policy.yaml", `#${"x".repeat(MAX_CONFIG_BYTES - 2)}\n`);
    expect(loadConfig("tools_policy", data.paths).allowed_commands).toEqual([]);
  });
});

describe("validateConfigFiles", () => {
  it("reports every file: missing, ok or invalid with key and reason, without stopping at the first", () => {
    const data = tempData();
    data.write("tools_policy.yaml", "allowed_commands: [git]\n");
    data.write("llm_router.yaml", "task_types:\n  conversation:\n    primary: { provider: nope, model: m }\n");
    data.write("agent_profile.json", "{ nope");
    data.write("assistant.env", "ASSISTANT_PORT = 4000\n");
    data.write("connectors.env", "not a line\n");
    const reports = validateConfigFiles(data.paths, { projectRoot: data.projectRoot });
    const byId = Object.fromEntries(reports.map((r) => [r.id, r]));
    expect(Object.keys(byId).sort()).toEqual([
      "agent_profile",
      "assistant_env",
      "autonomous_mission",
      "connectors_env",
      "llm_router",
      "tools_policy",
      "voice_router",
    ]);
    expect(byId.tools_policy).toEqual({ id: "tools_policy", file: data.paths.toolsPolicy, status: "ok" });
    expect(byId.autonomous_mission?.status).toBe("missing");
    expect(byId.voice_router?.status).toBe("missing");
    expect(byId.llm_router).toMatchObject({
      file: data.paths.routerFile,
      status: "invalid",
      error: { key: "task_types.conversation.primary.provider" },
    });
    expect(byId.agent_profile?.status).toBe("invalid");
    expect(byId.agent_profile?.error?.reason).toContain("JSON syntax error");
    expect(byId.assistant_env?.status).toBe("ok");
    expect(byId.connectors_env).toMatchObject({ status: "invalid", error: { key: "line 1" } });
  });

  it("is also exported from validate.ts", () => {
    expect(fromValidate).toBe(validateConfigFiles);
  });
});
