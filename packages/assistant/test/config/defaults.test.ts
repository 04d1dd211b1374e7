import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/configFiles.ts";
import { alignDefaultRoute, DEFAULT_ROUTER_YAML, STARTER_TOOLS_POLICY } from "../../src/config/defaults.ts";
import { denyAllToolsPolicy } from "../../src/config/schemas/toolsPolicy.ts";
import { configError, tempData } from "./helpers.ts";

const DEFAULT_ROUTE = {
  primary: { provider: "assistant_embedded", model: "default" },
  fallback: [{ provider: "assistant_core", model: "core" }],
};

function loadRouter(data: ReturnType<typeof tempData>) {
  return loadConfig("llm_router", data.paths, { projectRoot: data.projectRoot });
}

describe("STARTER_TOOLS_POLICY", () => {
  it("is a valid policy that allows nothing and asks before writing, running or touching devices", () => {
    const data = tempData();
    data.write("tools_policy.yaml", STARTER_TOOLS_POLICY);
    const policy = loadConfig("tools_policy", data.paths);
    expect(policy).toEqual(denyAllToolsPolicy());
    expect(policy.require_approval).toEqual(["write_file", "run_command", "device_invoke", "install_skill"]);
    expect(policy.browser_enabled).toBe(false);
    expect(policy.web_search_enabled).toBe(false);
  });

  it("comments every key it sets", () => {
    expect(STARTER_TOOLS_POLICY.split("\n").filter((line) => line.startsWith("#")).length).toBeGreaterThan(10);
    expect(STARTER_TOOLS_POLICY).toContain('"*"');
  });
});

describe("DEFAULT_ROUTER_YAML", () => {
  it("is valid and routes conversation to the embedded model, then core", () => {
    const data = tempData();
    data.write("llm_router.yaml", DEFAULT_ROUTER_YAML);
    const router = loadRouter(data);
    expect(router.task_types).toEqual({ conversation: DEFAULT_ROUTE });
    expect(router.global).toEqual({
      enable_metrics: true,
      enable_fallback: true,
      default_timeout_secs: 300,
      default_max_retries: 2,
    });
  });
});

describe("alignDefaultRoute", () => {
  it("creates a missing router file from the default", () => {
    const data = tempData();
    expect(alignDefaultRoute(data.paths.routerFile)).toEqual({ changed: true });
    expect(readFileSync(data.paths.routerFile, "utf8")).toBe(DEFAULT_ROUTER_YAML);
  });

  it("leaves an already aligned file byte-identical", () => {
    const data = tempData();
    const text = `${DEFAULT_ROUTER_YAML}  code_generation:\n    primary: { provider: cloud_a, model: m }   # mine\n`;
    const file = data.write("llm_router.yaml", text);
    expect(alignDefaultRoute(file)).toEqual({ changed: false });
    expect(readFileSync(file, "utf8")).toBe(text);
  });

  it("moves a custom primary to the fallbacks, puts core last and keeps other routes and comments", () => {
    const data = tempData();
    const file = data.write(
      "llm_router.yaml",
      `# header comment
providers:
  local_server:
    base_url: http://localhost:11434 # my box
task_types:
  # chat
  conversation:
    primary:
      provider: local_server # fast one
      model: llama3
      config: { temperature: 0.2 }
    fallback:
      - { provider: assistant_core, model: core }
      - { provider: cloud_a, model: backup } # paid
  code_generation: # untouched
    primary: { provider: cloud_a, model: coder }
`,
    );
    expect(alignDefaultRoute(file)).toEqual({ changed: true });
    const text = readFileSync(file, "utf8");
    for (const comment of ["# header comment", "# my box", "# chat", "# fast one", "# paid", "# untouched"]) {
      expect(text).toContain(comment);
    }
    const router = loadRouter(data);
    expect(router.task_types.conversation).toEqual({
      primary: { provider: "assistant_embedded", model: "default" },
      fallback: [
        { provider: "local_server", model: "llama3", config: { temperature: 0.2 } },
        { provider: "cloud_a", model: "backup" },
        { provider: "assistant_core", model: "core" },
      ],
    });
    expect(router.task_types.code_generation).toEqual({
      primary: { provider: "cloud_a", model: "coder" },
      fallback: [],
    });
    expect(alignDefaultRoute(file)).toEqual({ changed: false }); // idempotent
  });

  it("adds the conversation route when the file has none", () => {
    const data = tempData();
    const file = data.write("llm_router.yaml", "# keep me\nglobal:\n  enable_metrics: false\n");
    expect(alignDefaultRoute(file).changed).toBe(true);
    expect(readFileSync(file, "utf8")).toContain("# keep me");
    const router = loadRouter(data);
    expect(router.task_types.conversation).toEqual(DEFAULT_ROUTE);
    expect(router.global.enable_metrics).toBe(false);
  });

  it("replaces a core fallback with another model and adds a missing fallback list", () => {
    const data = tempData();
    const file = data.write(
      "llm_router.yaml",
      "task_types:\n  conversation:\n    primary: { provider: assistant_embedded, model: default }\n",
    );
    alignDefaultRoute(file);
    expect(loadRouter(data).task_types.conversation).toEqual(DEFAULT_ROUTE);
    const file2 = data.write(
      "llm_router.yaml",
      "task_types:\n  conversation:\n    primary: { provider: assistant_embedded, model: default }\n    fallback:\n      - { provider: assistant_core, model: other }\n      - { provider: cloud_b, model: x }\n",
    );
    alignDefaultRoute(file2);
    expect(loadRouter(data).task_types.conversation?.fallback).toEqual([
      { provider: "cloud_b", model: "x" },
      { provider: "assistant_core", model: "core" },
    ]);
  });

  it("keeps the comments of a comments-only file", () => {
    const data = tempData();
    const file = data.write("llm_router.yaml", "# written by hand\n");
    alignDefaultRoute(file);
    expect(readFileSync(file, "utf8").startsWith("# written by hand\n")).toBe(true);
    expect(loadRouter(data).task_types.conversation).toEqual(DEFAULT_ROUTE);
  });

  it("with keepCustomPrimary keeps the user's primary and puts the embedded model before core", () => {
    const data = tempData();
    const file = data.write(
      "llm_router.yaml",
      "task_types:\n  conversation:\n    primary: { provider: cloud_a, model: gpt } # chosen\n    fallback:\n      - { provider: cloud_b, model: x }\n",
    );
    expect(alignDefaultRoute(file, { keepCustomPrimary: true })).toEqual({ changed: true });
    expect(readFileSync(file, "utf8")).toContain("# chosen");
    expect(loadRouter(data).task_types.conversation).toEqual({
      primary: { provider: "cloud_a", model: "gpt" },
      fallback: [
        { provider: "cloud_b", model: "x" },
        { provider: "assistant_embedded", model: "default" },
        { provider: "assistant_core", model: "core" },
      ],
    });
    expect(alignDefaultRoute(file, { keepCustomPrimary: true })).toEqual({ changed: false });
    // Without the option the same file is brought back to the plain default, the user's model first in line.
    alignDefaultRoute(file);
    expect(loadRouter(data).task_types.conversation?.primary).toEqual({
      provider: "assistant_embedded",
      model: "default",
    });
    expect(loadRouter(data).task_types.conversation?.fallback[0]).toEqual({ provider: "cloud_a", model: "gpt" });
  });

  it("refuses to touch a file that is invalid elsewhere", () => {
    const data = tempData();
    const text = "providers:\n  cloud_x: {}\n";
    const file = data.write("llm_router.yaml", text);
    expect(configError(() => alignDefaultRoute(file)).key).toBe("providers.cloud_x");
    expect(readFileSync(file, "utf8")).toBe(text);
    expect(existsSync(file)).toBe(true);
  });
});
