import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/configFiles.ts";
import { INT32_MAX, INT32_MIN, llmRouterSchema } from "../../src/config/schemas/llmRouter.ts";
import { configError, tempData } from "./helpers.ts";

const FULL = `# my router
version: "2"
global:
  enable_metrics: false
  default_timeout_secs: 120
providers:
  local_server:
    base_url: http://localhost:11434
  cloud_a:
    api_key_ref: vault://cloud_a_api_key
    organization: org-123
  cloud_azure:
    api_key_ref: AZURE_KEY
    base_url: https://example.openai.azure.com
    version: "2024-06-01"
  cloud_b:
    api_key_ref: CLOUD_B_API_KEY
    site_url: https://me.example
    app_title: Assistant
    always_available: true
  lowbit_server:
    base_url: http://127.0.0.1:8080/v1
model_options:
  "qwen2.5:7b":
    context_length_max: 32768
    num_ctx: 8192
    family: qwen2
    parameter_size: 7.6B
    capabilities: [completion, tools]
    modified_at: "2025-01-01T00:00:00Z"
    extra: { anything: [1, 2], nested: { ok: true } }
task_types:
  conversation:
    primary: { provider: assistant_embedded, model: default }
    fallback:
      - { provider: local_server, model: "qwen2.5:7b", config: { temperature: 0.7, num_ctx: 8192 } }
      - { provider: assistant_core, model: core }
  image_generation:
    primary: { provider: cloud_a, model: img-1, config: { default_size: 1024x768 } }
  my_custom_type:
    primary: { provider: cloud_azure, model: my-deployment, config: { thinking_level: high, top_p: 0.9 } }
    constraints: { max_cost_per_request: 0.05, max_latency_secs: 20 }
`;

function load(text: string) {
  const data = tempData();
  const file = data.write("llm_router.yaml", text);
  return { file, load: () => loadConfig("llm_router", data.paths, { projectRoot: data.projectRoot }) };
}

describe("llm_router.yaml", () => {
  it("loads a complete file and fills the global defaults that are not set", () => {
    const router = load(FULL).load();
    expect(router.version).toBe("2");
    expect(router.global).toEqual({
      enable_metrics: false,
      enable_fallback: true,
      default_timeout_secs: 120,
      default_max_retries: 2,
    });
    expect(router.providers.cloud_a).toEqual({ api_key_ref: "vault://cloud_a_api_key", organization: "org-123" });
    expect(router.providers.cloud_b?.always_available).toBe(true);
    expect(router.model_options["qwen2.5:7b"]?.extra).toEqual({ anything: [1, 2], nested: { ok: true } });
    expect(router.task_types.conversation?.fallback.map((t) => t.provider)).toEqual(["local_server", "assistant_core"]);
    expect(router.task_types.image_generation?.fallback).toEqual([]);
    expect(router.task_types.image_generation?.primary.config).toEqual({ default_size: "1024x768" });
    expect(router.task_types.my_custom_type?.constraints).toEqual({ max_cost_per_request: 0.05, max_latency_secs: 20 });
  });

  it("gives the global defaults for a missing file", () => {
    const data = tempData();
    const router = loadConfig("llm_router", data.paths, { projectRoot: data.projectRoot });
    expect(router).toEqual({
      global: { enable_metrics: true, enable_fallback: true, default_timeout_secs: 300, default_max_retries: 2 },
      providers: {},
      model_options: {},
      task_types: {},
    });
  });

  it("clamps large integers in route config to 32-bit limits", () => {
    const { load: run } = load(`task_types:
  conversation:
    primary:
      provider: local_server
      model: m
      config: { num_ctx: 99999999999, top_k: -99999999999, num_gpu: 12, max_tokens: 2147483648 }
`);
    const config = run().task_types.conversation?.primary.config;
    expect(config).toEqual({ num_ctx: INT32_MAX, top_k: INT32_MIN, num_gpu: 12, max_tokens: INT32_MAX });
  });

  it("clamps in the schema's transform, also for numbers beyond the safe-integer range", () => {
    const parsed = llmRouterSchema.parse({
      task_types: { t: { primary: { provider: "cloud_a", model: "m", config: { num_ctx: 1e20 } } } },
    });
    expect(parsed.task_types.t?.primary.config?.num_ctx).toBe(2_147_483_647);
  });

  it("maps the legacy max_token to max_tokens", () => {
    const { load: run } = load(`task_types:
  system:
    primary: { provider: cloud_a, model: m, config: { max_token: 8192 } }
`);
    const config = run().task_types.system?.primary.config;
    expect(config).toEqual({ max_tokens: 8192 });
    expect(config).not.toHaveProperty("max_token");
  });

  it("refuses max_token and max_tokens together", () => {
    const { file, load: run } = load(`task_types:
  system:
    primary: { provider: cloud_a, model: m, config: { max_token: 1, max_tokens: 2 } }
`);
    const error = configError(run);
    expect(error.file).toBe(file);
    expect(error.key).toBe("task_types.system.primary.config.max_token");
    expect(error.reason).toContain("max_tokens");
  });

  it("refuses a non-integer where an integer is expected", () => {
    const error = configError(
      load(`task_types:
  t:
    primary: { provider: cloud_a, model: m, config: { num_ctx: 1.5 } }
`).load,
    );
    expect(error.key).toBe("task_types.t.primary.config.num_ctx");
    expect(error.reason).toContain("whole number");
  });

  it("names the file, the key path and the reason for an unknown route provider", () => {
    const { file, load: run } = load(`task_types:
  conversation:
    primary: { provider: openai, model: gpt }
`);
    const error = configError(run);
    expect(error.file).toBe(file);
    expect(error.key).toBe("task_types.conversation.primary.provider");
    expect(error.reason).toContain('"openai" is not allowed');
    expect(error.reason).toContain('"assistant_embedded"');
    expect(error.message).toContain(file);
    expect(error.message).toContain("task_types.conversation.primary.provider");
  });

  it("indexes fallback entries in the key path", () => {
    const error = configError(
      load(`task_types:
  conversation:
    primary: { provider: cloud_a, model: a }
    fallback:
      - { provider: cloud_b, model: b }
      - { provider: cloud_b }
`).load,
    );
    expect(error.key).toBe("task_types.conversation.fallback[1].model");
    expect(error.reason).toBe("required");
  });

  it("refuses an unknown provider name under providers", () => {
    const error = configError(load("providers:\n  cloud_x:\n    base_url: https://x.example\n").load);
    expect(error.key).toBe("providers.cloud_x");
    expect(error.reason).toBe("unknown key");
  });

  it.each([
    ["top level", "verbose: true\n", "verbose"],
    ["global", "global:\n  enable_metric: true\n", "global.enable_metric"],
    ["provider", "providers:\n  cloud_a:\n    apikey: X\n", "providers.cloud_a.apikey"],
    [
      "route",
      "task_types:\n  t:\n    primary: { provider: cloud_a, model: m }\n    fallbacks: []\n",
      "task_types.t.fallbacks",
    ],
    [
      "route config",
      "task_types:\n  t:\n    primary: { provider: cloud_a, model: m, config: { seed: 1 } }\n",
      "task_types.t.primary.config.seed",
    ],
    ["model options", "model_options:\n  m:\n    size: 1\n", "model_options.m.size"],
    [
      "constraints",
      "task_types:\n  t:\n    primary: { provider: cloud_a, model: m }\n    constraints: { max_cost: 1 }\n",
      "task_types.t.constraints.max_cost",
    ],
  ])("refuses an unknown key in %s", (_where, text, key) => {
    const error = configError(load(text).load);
    expect(error.key).toBe(key);
    expect(error.reason).toBe("unknown key");
  });

  it.each([
    ["sk-abcdef0123456789", false],
    ["vault://", false],
    ["vault://cloud a", false],
    ["https://vault/x", false],
    ["vault://cloud_a_api_key", true],
    ["CLOUD_A_API_KEY", true],
  ])("checks the form of api_key_ref %s", (ref, ok) => {
    const { load: run } = load(`providers:\n  cloud_a:\n    api_key_ref: "${ref}"\n`);
    if (ok) {
      expect(run().providers.cloud_a?.api_key_ref).toBe(ref);
      return;
    }
    const error = configError(run);
    expect(error.key).toBe("providers.cloud_a.api_key_ref");
    expect(error.reason).toContain("vault://<key_name>");
    if (ref.startsWith("sk-")) expect(error.message).not.toContain(ref); // a pasted key never lands in a log line
  });

  it.each([
    ["ftp://host/x", "http:// or https://"],
    ["localhost:11434", "http:// or https://"],
    ["https://user:pw@host.example", "vault"],
  ])("refuses base_url %s", (url, reason) => {
    const error = configError(load(`providers:\n  local_server:\n    base_url: "${url}"\n`).load);
    expect(error.key).toBe("providers.local_server.base_url");
    expect(error.reason).toContain(reason);
  });

  it.each([
    ["global:\n  enable_metrics: yes please\n", "global.enable_metrics", "expected boolean, got string"],
    ["global:\n  default_timeout_secs: 0\n", "global.default_timeout_secs", ">0"],
    ["task_types:\n  t:\n    primary: [cloud_a, m]\n", "task_types.t.primary", "expected object, got a list"],
    [
      "task_types:\n  t:\n    primary: { provider: cloud_a, model: m, config: { temperature: hot } }\n",
      "task_types.t.primary.config.temperature",
      "expected number, got string",
    ],
    [
      "task_types:\n  t:\n    primary: { provider: cloud_a, model: m, config: { default_size: big } }\n",
      "task_types.t.primary.config.default_size",
      "<width>x<height>",
    ],
    ["model_options:\n  m:\n    capabilities: tools\n", "model_options.m.capabilities", "expected array, got string"],
    ["task_types: []\n", "task_types", "expected record, got a list"],
  ])("reports wrong types: %s", (text, key, reason) => {
    const error = configError(load(text).load);
    expect(error.key).toBe(key);
    expect(error.reason).toContain(reason);
  });

  it("treats an empty value as not set", () => {
    const router = load(
      "providers:\ntask_types:\n  t:\n    primary: { provider: cloud_a, model: m }\n    fallback:\n",
    ).load();
    expect(router.providers).toEqual({});
    expect(router.task_types.t?.fallback).toEqual([]);
  });

  it("quotes key path segments that are not plain words", () => {
    const error = configError(load('model_options:\n  "qwen2.5:7b":\n    num_ctx: lots\n').load);
    expect(error.key).toBe('model_options["qwen2.5:7b"].num_ctx');
  });

  it("counts the other problems in the reason", () => {
    const error = configError(load("a: 1\nb: 2\nglobal:\n  enable_metrics: 3\n").load);
    expect(error.reason).toMatch(/and \d+ more problem/);
  });
});
