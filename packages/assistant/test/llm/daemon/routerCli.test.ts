import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { tempDataDir } from "../../helpers/daemon.ts";
import { runCli } from "../../setup/helpers.ts";
import { startOllamaServer } from "../servers/ollamaServer.ts";
import { type ScriptedServer, startOpenAiServer } from "../servers/openaiServer.ts";

// Router commands that work without a daemon: discovery of local servers, `router show`, `config models fetch`.

let ollama: ScriptedServer;
let llamacpp: ScriptedServer;
let dataDir: string;

beforeAll(async () => {
  ollama = await startOllamaServer({
    models: [
      {
        name: "llama3.2:3b",
        family: "llama",
        parameter_size: "3.2B",
        context_length: 131072,
        capabilities: ["completion", "tools"],
      },
    ],
  });
  llamacpp = await startOpenAiServer({
    models: [{ id: "qwen-lowbit", object: "model" }],
    props: { default_generation_settings: { n_ctx: 4096 } },
  });
  dataDir = tempDataDir();
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(
    join(dataDir, "llm_router.yaml"),
    `# keep me
providers:
  local_server:
    base_url: ${ollama.url}
  lowbit_server:
    base_url: ${llamacpp.url}/v1
task_types:
  conversation:
    primary: {provider: local_server, model: "llama3.2:3b"}
    fallback:
      - {provider: lowbit_server, model: qwen-lowbit}
  code_generation:
    primary: {provider: cloud_a, model: gpt-4o-mini}
`,
  );
});
afterAll(async () => {
  await ollama.close();
  await llamacpp.close();
});

const run = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  runCli(args, { env: { ASSISTANT_DATA_DIR: dataDir, ...env } });

describe("assistant router discover / assistant discover", () => {
  it("asks the servers of llm_router.yaml and LOCAL_SERVER_HOST, and says how to use each", async () => {
    const res = await run(["router", "discover", "--json"], { LOCAL_SERVER_HOST: "http://127.0.0.1:9" });
    expect(res.code, res.stderr).toBe(0);
    const found = res.json();
    expect(found.slice(0, 3)).toMatchObject([
      { provider: "local_server", base_url: ollama.url, source: "llm_router.yaml", reachable: true },
      { provider: "lowbit_server", base_url: `${llamacpp.url}/v1`, source: "llm_router.yaml", reachable: true },
      { provider: "local_server", base_url: "http://127.0.0.1:9", source: "LOCAL_SERVER_HOST", reachable: false },
    ]);
    const text = await run(["discover"]);
    expect(text.stdout).toContain(`${ollama.url}     Ollama 0.12.0, 1 model: llama3.2:3b (llm_router.yaml)\n`);
    expect(text.stdout).toContain(
      `  use this server: assistant config provider set-lowbit-server --url ${llamacpp.url}/v1 --category conversation --model qwen-lowbit\n`,
    );
  });
});

describe("assistant config models fetch", () => {
  it("stores each provider's model metadata under model_options and keeps the comments", async () => {
    const res = await run(["config", "models", "fetch", "--json"]);
    expect(res.code).toBe(0);
    const result = res.json();
    expect(result.models).toEqual(expect.arrayContaining(["llama3.2:3b"]));
    // cloud_a has no key: reported, not fatal.
    expect(result.providers.find((p: { provider: string }) => p.provider === "cloud_a").error).toMatch(/key|vault/i);
    const text = readFileSync(join(dataDir, "llm_router.yaml"), "utf8");
    expect(text).toContain("# keep me");
    const file = parse(text);
    expect(file.model_options["llama3.2:3b"]).toMatchObject({
      family: "llama",
      parameter_size: "3.2B",
      context_length_max: 131072,
      capabilities: ["completion", "tools"],
    });
    expect(file.model_options["qwen-lowbit"]).toMatchObject({ num_ctx: 4096 });
    const validate = await run(["config", "validate"]);
    expect(validate.code).toBe(0);
  });

  it("router show describes a model from the file", async () => {
    const res = await run(["router", "show", "llama3.2:3b", "--json"]);
    expect(res.code).toBe(0);
    expect(res.json()).toMatchObject({
      model: "llama3.2:3b",
      options: { family: "llama" },
      price: { inputPerMTok: 0, outputPerMTok: 0 },
      routes: [{ category: "conversation", role: "primary", provider: "local_server" }],
    });
    const cloud = await run(["router", "show", "gpt-4o-mini"]);
    expect(cloud.stdout).toContain("$0.15/M input tokens");
    expect(cloud.stdout).toContain("primary of code_generation (provider cloud_a)");
    const unknown = await run(["router", "show", "nope"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no route and no model_options entry names "nope"');
  });
});

describe("assistant router metrics without a daemon", () => {
  it("says the daemon is not running", async () => {
    const res = await run(["router", "metrics"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("the daemon is not running");
  });
});
