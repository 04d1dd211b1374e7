import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { DEFAULT_ROUTER_YAML } from "../../../src/config/defaults.ts";
import { llmRouterSchema } from "../../../src/config/schemas/llmRouter.ts";
import { getRoute, listRoutes, saveModelOptions, setRoute } from "../../../src/llm/routeEditor.ts";
import { appError, configError, tempData } from "../../config/helpers.ts";

const ROUTER = `# My router: hand-tuned, keep this header
version: "1"

providers:
  local_server:
    base_url: http://192.168.1.20:11434   # the box under the desk

model_options:
  llama3.2:
    num_ctx: 8192   # tuned by hand

task_types:
  conversation:
    # chats go to the box first
    primary:
      provider: local_server
      model: llama3.2
      config: { temperature: 0.4 }
    fallback:
      - provider: assistant_embedded
        model: default
      - provider: assistant_core   # last resort
        model: core
  system:
    primary: { provider: assistant_embedded, model: default }
`;

const EMBEDDED = { provider: "assistant_embedded", model: "default" };
const CORE = { provider: "assistant_core", model: "core" };

function routerFile(text = ROUTER) {
  const data = tempData();
  return { data, file: data.write("llm_router.yaml", text) };
}

function readRouter(file: string) {
  return llmRouterSchema.parse(parse(readFileSync(file, "utf8")));
}

describe("setRoute", () => {
  it("changes only the route: comments, layout and unrelated keys stay byte for byte", () => {
    const { file } = routerFile();
    const result = setRoute(file, "conversation", "cloud_a", "gpt-4o-mini");
    expect(result).toMatchObject({ category: "conversation", file, changed: true });
    // The old primary node moves whole (with its config) to the front of the fallbacks.
    expect(readFileSync(file, "utf8")).toBe(
      ROUTER.replace(
        `    primary:
      provider: local_server
      model: llama3.2
      config: { temperature: 0.4 }
    fallback:
`,
        `    primary:
      provider: cloud_a
      model: gpt-4o-mini
    fallback:
      - provider: local_server
        model: llama3.2
        config: { temperature: 0.4 }
`,
      ),
    );
  });

  it("makes the previous primary the first fallback and reports what it was", () => {
    const { file } = routerFile();
    const result = setRoute(file, "conversation", "cloud_b", "vendor/model-x");
    expect(result.primary).toEqual({ provider: "cloud_b", model: "vendor/model-x" });
    expect(result.fallback).toEqual([{ provider: "local_server", model: "llama3.2" }, EMBEDDED, CORE]);
    expect(result.previous).toEqual({
      category: "conversation",
      primary: { provider: "local_server", model: "llama3.2" },
      fallback: [EMBEDDED, CORE],
      source: "file",
    });
  });

  it("leaves no duplicates: a fallback naming the new primary is promoted, the old primary moves to the front", () => {
    const { file } = routerFile();
    const result = setRoute(file, "conversation", "assistant_embedded", "default");
    expect(result.primary).toEqual(EMBEDDED);
    expect(result.fallback).toEqual([{ provider: "local_server", model: "llama3.2" }, CORE]);

    // Back again: local_server was a fallback, it becomes primary with the config it carried, and appears once.
    const back = setRoute(file, "conversation", "local_server", "llama3.2");
    expect(back.fallback).toEqual([EMBEDDED, CORE]);
    expect(readRouter(file).task_types.conversation?.primary).toEqual({
      provider: "local_server",
      model: "llama3.2",
      config: { temperature: 0.4 },
    });
  });

  it("writes nothing when the category already has that primary", () => {
    const { file } = routerFile();
    const result = setRoute(file, "conversation", "local_server", "llama3.2");
    expect(result.changed).toBe(false);
    expect(readFileSync(file, "utf8")).toBe(ROUTER);
  });

  it("creates a new category whose fallbacks are the route it inherited", () => {
    const { file } = routerFile();
    const code = setRoute(file, "code_generation", "local_server", "qwen2.5-coder:7b");
    expect(code.previous).toMatchObject({
      source: "default",
      primary: { provider: "local_server", model: "llama3.2" },
    });
    expect(code.fallback).toEqual([{ provider: "local_server", model: "llama3.2" }, EMBEDDED, CORE]);

    // orchestrator inherits system (no fallbacks there); the new primary is never also a fallback.
    const orchestrator = setRoute(file, "orchestrator", "cloud_a", "gpt-4o");
    expect(orchestrator.fallback).toEqual([EMBEDDED]);
    const specialist = setRoute(file, "financial", "local_server", "llama3.2");
    expect(specialist.fallback).toEqual([EMBEDDED, CORE]);

    // image_generation inherits nothing: a chat model cannot make images.
    const image = setRoute(file, "image_generation", "cloud_a", "gpt-image-1");
    expect(image).toMatchObject({ fallback: [], previous: { primary: null, fallback: [] } });

    const text = readFileSync(file, "utf8");
    expect(text).toContain("# My router: hand-tuned, keep this header");
    expect(text).toContain("  code_generation:\n    primary:\n      provider: local_server\n");
  });

  it("creates a missing router file from the commented default", () => {
    const data = tempData();
    const file = join(data.paths.dataDir, "llm_router.yaml");
    const result = setRoute(file, "code_generation", "local_server", "llama3.2");
    expect(result.fallback).toEqual([EMBEDDED, CORE]);
    const text = readFileSync(file, "utf8");
    expect(text.startsWith(DEFAULT_ROUTER_YAML)).toBe(true);
    expect(text.slice(DEFAULT_ROUTER_YAML.length)).toBe(
      "  code_generation:\n    primary:\n      provider: local_server\n      model: llama3.2\n    fallback:\n" +
        "      - provider: assistant_embedded\n        model: default\n      - provider: assistant_core\n        model: core\n",
    );
  });

  it("adds to empty `task_types: {}` and `providers:` as block YAML", () => {
    const { file } = routerFile("providers:\ntask_types: {}\n");
    setRoute(file, "conversation", "local_server", "llama3.2");
    expect(readFileSync(file, "utf8")).toBe(
      "providers:\ntask_types:\n  conversation:\n    primary:\n      provider: local_server\n      model: llama3.2\n" +
        "    fallback:\n      - provider: assistant_embedded\n        model: default\n      - provider: assistant_core\n        model: core\n",
    );
  });

  it("refuses an unknown provider, a bad category or an empty model with a clear message, file unchanged", () => {
    const { file } = routerFile();
    const provider = appError(() => setRoute(file, "conversation", "openai", "gpt-4o"));
    expect(provider.code).toBe("invalid_request");
    expect(provider.message).toBe(
      'unknown provider "openai": expected one of assistant_embedded, assistant_core, local_server, cloud_a, cloud_azure, cloud_b, lowbit_server',
    );
    for (const category of ["", "two words", "a/b", "x".repeat(65), "my.team-route_2"]) {
      const error = appError(() => setRoute(file, category, "local_server", "llama3.2"));
      expect(error.message).toMatch(/^unknown category ".*"; the categories are conversation, code_generation, /);
    }
    // A typo is never a new category: the close match is named.
    expect(appError(() => setRoute(file, "conversaton", "local_server", "llama3.2")).message).toContain(
      '(did you mean "conversation"?)',
    );
    expect(appError(() => setRoute(file, "conversation", "local_server", "  ")).message).toBe(
      "the model name must not be empty",
    );
    expect(readFileSync(file, "utf8")).toBe(ROUTER);
  });

  it("refuses to edit an invalid router file and leaves it as it was", () => {
    const typo = ROUTER.replace("  system:\n", "  system:\n    primry: {}\n");
    const { file } = routerFile(typo);
    const error = configError(() => setRoute(file, "code_generation", "local_server", "llama3.2"));
    expect(error.key).toBe("task_types.system.primry");
    expect(readFileSync(file, "utf8")).toBe(typo);

    const broken = "task_types:\n  conversation: [\n";
    writeFileSync(file, broken);
    expect(configError(() => setRoute(file, "conversation", "local_server", "m")).reason).toMatch(/YAML syntax error/);
    expect(readFileSync(file, "utf8")).toBe(broken);
  });
});

describe("listRoutes and getRoute", () => {
  it("lists the built-in default for every standard category when the file has no routes", () => {
    const routes = listRoutes(llmRouterSchema.parse({}));
    expect(routes.map((r) => r.category)).toEqual([
      "conversation",
      "code_generation",
      "creative_writing",
      "scientific_analysis",
      "data_analysis",
      "system_diagnostic",
      "system",
      "orchestrator",
      "image_generation",
    ]);
    for (const route of routes.slice(0, 8)) {
      expect(route).toEqual({ category: route.category, primary: EMBEDDED, fallback: [CORE], source: "default" });
    }
    expect(routes[8]).toEqual({ category: "image_generation", primary: null, fallback: [], source: "default" });
  });

  it("marks file entries, inherits conversation and system, and lists extra task types", () => {
    const config = llmRouterSchema.parse({
      task_types: {
        conversation: { primary: { provider: "local_server", model: "llama3.2" } },
        system: { primary: { provider: "cloud_a", model: "gpt-4o-mini" }, fallback: [EMBEDDED] },
        financial: { primary: { provider: "cloud_b", model: "fin" } },
      },
    });
    const byName = Object.fromEntries(listRoutes(config).map((r) => [r.category, r]));
    expect(byName.conversation).toMatchObject({ source: "file", primary: { provider: "local_server" }, fallback: [] });
    expect(byName.code_generation).toMatchObject({ source: "default", primary: { provider: "local_server" } });
    expect(byName.orchestrator).toEqual({
      category: "orchestrator",
      primary: { provider: "cloud_a", model: "gpt-4o-mini" },
      fallback: [EMBEDDED],
      source: "default",
    });
    expect(byName.financial).toMatchObject({ source: "file", primary: { provider: "cloud_b", model: "fin" } });
    expect(Object.keys(byName).at(-1)).toBe("financial");

    expect(getRoute(config)).toEqual(byName.conversation);
    expect(getRoute(config, "qa")).toMatchObject({ category: "qa", source: "default", primary: { model: "llama3.2" } });
    expect(appError(() => getRoute(config, "no spaces")).code).toBe("invalid_request");
  });
});

describe("saveModelOptions", () => {
  it("merges fetched fields, keeping the user's fields and comments, and adds new models", () => {
    const { file } = routerFile();
    const result = saveModelOptions(file, {
      "llama3.2": { context_length_max: 131072, family: "llama" },
      "qwen2.5:7b": { family: "qwen2", capabilities: ["completion", "tools"] },
    });
    expect(result).toEqual({ file, models: ["llama3.2", "qwen2.5:7b"], changed: true });
    expect(readFileSync(file, "utf8")).toBe(
      ROUTER.replace(
        "    num_ctx: 8192   # tuned by hand\n",
        "    num_ctx: 8192   # tuned by hand\n    context_length_max: 131072\n    family: llama\n" +
          "  qwen2.5:7b:\n    family: qwen2\n    capabilities:\n      - completion\n      - tools\n",
      ),
    );
    expect(saveModelOptions(file, { "llama3.2": { family: "llama" } }).changed).toBe(false);
  });

  it("creates the file when missing and refuses invalid metadata without writing", () => {
    const data = tempData();
    const file = join(data.paths.dataDir, "llm_router.yaml");
    saveModelOptions(file, { m1: { num_ctx: 4096 } });
    expect(readFileSync(file, "utf8")).toContain("model_options:\n  m1:\n    num_ctx: 4096\n");
    const before = readFileSync(file, "utf8");
    const error = configError(() => saveModelOptions(file, { m1: { family: 7 as unknown as string } }));
    expect(error.key).toBe("model_options.m1.family");
    expect(readFileSync(file, "utf8")).toBe(before);
  });
});
