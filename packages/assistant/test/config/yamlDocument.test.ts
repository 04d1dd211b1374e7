import { existsSync, readFileSync, statSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/configFiles.ts";
import { llmRouterSchema } from "../../src/config/schemas/llmRouter.ts";
import { toolsPolicySchema } from "../../src/config/schemas/toolsPolicy.ts";
import { getYamlValue, parseYaml, setYamlValue, updateYamlFile } from "../../src/config/yamlDocument.ts";
import { configError, tempData } from "./helpers.ts";

const ROUTER = `# Router of the house: keep this header
version: "1"

global:
  enable_metrics: true   # metrics stay on
  default_timeout_secs: 300

providers:
  # the box under the desk
  local_server:
    base_url: http://localhost:11434  # default port

task_types:
  conversation:
    primary: { provider: assistant_embedded, model: default }
    fallback:
      - provider: assistant_core   # last resort
        model: core
`;

describe("updateYamlFile", () => {
  it("keeps comments and formatting while changing a value", () => {
    const data = tempData();
    const file = data.write("llm_router.yaml", ROUTER);
    const result = updateYamlFile(
      file,
      (doc) => setYamlValue(doc, "providers.local_server.base_url", "http://10.0.0.2:11434"),
      llmRouterSchema,
    );
    expect(result.changed).toBe(true);
    const text = readFileSync(file, "utf8");
    // Every other line byte for byte; the edited one keeps its comment in the same column.
    expect(text).toBe(
      ROUTER.replace("http://localhost:11434  # default port", "http://10.0.0.2:11434   # default port"),
    );
  });

  it("adds new keys as block YAML under existing ones without touching the rest", () => {
    const data = tempData();
    const file = data.write("llm_router.yaml", ROUTER);
    updateYamlFile(
      file,
      (doc) => {
        setYamlValue(doc, ["providers", "cloud_a"], { api_key_ref: "vault://cloud_a_api_key" });
        setYamlValue(doc, "task_types.code_generation", { primary: { provider: "cloud_a", model: "m1" } });
      },
      llmRouterSchema,
    );
    const text = readFileSync(file, "utf8");
    for (const comment of [
      "# Router of the house",
      "# metrics stay on",
      "# the box under the desk",
      "# default port",
      "# last resort",
    ]) {
      expect(text).toContain(comment);
    }
    expect(text).toContain("  cloud_a:\n    api_key_ref: vault://cloud_a_api_key\n");
    const router = loadConfig("llm_router", data.paths, { projectRoot: data.projectRoot });
    expect(router.task_types.code_generation?.primary).toEqual({ provider: "cloud_a", model: "m1" });
    expect(router.providers.local_server?.base_url).toBe("http://localhost:11434");
  });

  it("leaves the file byte-identical when the edit would make it invalid", () => {
    const data = tempData();
    const file = data.write("llm_router.yaml", ROUTER);
    const before = readFileSync(file);
    const error = configError(() =>
      updateYamlFile(
        file,
        (doc) => setYamlValue(doc, "task_types.conversation.primary.provider", "openai"),
        llmRouterSchema,
      ),
    );
    expect(error.file).toBe(file);
    expect(error.key).toBe("task_types.conversation.primary.provider");
    expect(readFileSync(file).equals(before)).toBe(true);
  });

  it("does not create a missing file when the edit would make it invalid", () => {
    const data = tempData();
    const file = data.paths.toolsPolicy;
    configError(() => updateYamlFile(file, (doc) => setYamlValue(doc, "browser_headless", "no"), toolsPolicySchema));
    expect(existsSync(file)).toBe(false);
  });

  it("creates a missing file with mode 0600", () => {
    const data = tempData();
    const file = data.paths.toolsPolicy;
    const result = updateYamlFile(file, (doc) => setYamlValue(doc, "allowed_commands", ["git"]), toolsPolicySchema);
    expect(result.changed).toBe(true);
    expect(readFileSync(file, "utf8")).toBe("allowed_commands:\n  - git\n");
    if (process.platform !== "win32") expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(loadConfig("tools_policy", data.paths).allowed_commands).toEqual(["git"]);
  });

  it("writes nothing for an edit that changes nothing, even when yaml would reformat the file", () => {
    const data = tempData();
    const text = "allowed_commands: [ git,ls ]   # odd spacing\n\n\nbrowser_enabled:    false\n";
    const file = data.write("tools_policy.yaml", text);
    const mtime = statSync(file).mtimeMs;
    const result = updateYamlFile(file, (doc) => {
      setYamlValue(doc, "allowed_commands", getYamlValue(doc, "allowed_commands"));
      setYamlValue(doc, "browser_enabled", false);
    });
    expect(result.changed).toBe(false);
    expect(readFileSync(file, "utf8")).toBe(text);
    expect(statSync(file).mtimeMs).toBe(mtime);
    updateYamlFile(data.paths.voiceRouter, () => {});
    expect(existsSync(data.paths.voiceRouter)).toBe(false);
  });

  it("refuses to edit a file with a YAML syntax error and leaves it alone", () => {
    const data = tempData();
    const file = data.write("voice_router.yaml", "stt: [\n");
    const error = configError(() => updateYamlFile(file, (doc) => setYamlValue(doc, "tts.base_url", "http://x")));
    expect(error.reason).toContain("YAML syntax error");
    expect(readFileSync(file, "utf8")).toBe("stt: [\n");
  });

  it("keeps the comments of a scalar it replaces", () => {
    const data = tempData();
    const file = data.write("tools_policy.yaml", "browser_enabled: false # flip when ready\n");
    updateYamlFile(file, (doc) => setYamlValue(doc, "browser_enabled", true), toolsPolicySchema);
    expect(readFileSync(file, "utf8")).toBe("browser_enabled: true # flip when ready\n");
    const aligned = data.write("voice_router.yaml", "stt:\n  base_url: http://a:1       # aligned\n  # about tts\n");
    updateYamlFile(aligned, (doc) => setYamlValue(doc, "stt.base_url", "http://stt:8766"));
    expect(readFileSync(aligned, "utf8")).toBe("stt:\n  base_url: http://stt:8766  # aligned\n  # about tts\n");
  });
});

describe("getYamlValue and setYamlValue", () => {
  it("reads plain values at dotted or array key paths", () => {
    const doc = parseYaml('a:\n  b: [1, 2]\n  "x.y": { z: true }\n', "t.yaml");
    expect(getYamlValue(doc, "a.b")).toEqual([1, 2]);
    expect(getYamlValue(doc, ["a", "x.y", "z"])).toBe(true);
    expect(getYamlValue(doc, "a.missing")).toBeUndefined();
  });

  it("refuses to set below a scalar", () => {
    const doc = parseYaml("a: 1\n", "t.yaml");
    expect(() => setYamlValue(doc, "a.b", 2)).toThrow(/not a mapping/);
  });

  it("lets later edits reach inside values it created", () => {
    const doc = parseYaml("", "t.yaml");
    setYamlValue(doc, "a", { b: { c: 1 } });
    setYamlValue(doc, "a.b.c", 2);
    expect(getYamlValue(doc, "a")).toEqual({ b: { c: 2 } });
  });
});
