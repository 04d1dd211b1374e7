import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { allFileTexts, type RunOptions, sandbox } from "../../setup/helpers.ts";

// `assistant config models` and `assistant config provider` through the real CLI binary, each test with its own
// data directory and a vault protected by a master key.

const MASTER = "cli-test-master-key";
const SECRET = "sk-cli-4b1d93e7-never-in-a-file";

function box() {
  const b = sandbox();
  const run = (args: string[], options: RunOptions = {}) =>
    b.run(args, { ...options, env: { ASSISTANT_VAULT_MASTER_KEY: MASTER, ...options.env } });
  return { ...b, run };
}

describe("assistant config models", () => {
  it("routes, set and get work on a fresh data directory, with parseable --json", async () => {
    const b = box();
    const routes = await b.run(["config", "models", "routes", "--json"]);
    expect(routes.code, routes.stderr).toBe(0);
    const listed = routes.json();
    expect(listed.file).toBe(b.file("llm_router.yaml"));
    expect(listed.routes).toHaveLength(9);
    expect(listed.routes[0]).toEqual({
      category: "conversation",
      primary: { provider: "assistant_embedded", model: "default" },
      fallback: [{ provider: "assistant_core", model: "core" }],
      source: "default",
    });

    const set = await b.run(["config", "models", "set", "code_generation", "local_server", "qwen2.5-coder:7b"]);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toBe(
      [
        "code_generation: primary local_server/qwen2.5-coder:7b (was assistant_embedded/default, now the first fallback)",
        "  fallback: assistant_embedded/default, assistant_core/core",
        `saved to ${b.file("llm_router.yaml")}; the daemon uses it from its next start`,
        "",
      ].join("\n"),
    );
    expect(b.yaml("llm_router.yaml").task_types.code_generation.primary).toEqual({
      provider: "local_server",
      model: "qwen2.5-coder:7b",
    });

    const again = await b.run(["config", "models", "set", "code_generation", "cloud_a", "gpt-4o", "--json"]);
    expect(again.json()).toMatchObject({
      category: "code_generation",
      primary: { provider: "cloud_a", model: "gpt-4o" },
      fallback: [{ provider: "local_server" }, { provider: "assistant_embedded" }, { provider: "assistant_core" }],
      previous: { source: "file", primary: { provider: "local_server", model: "qwen2.5-coder:7b" } },
      changed: true,
      daemon_running: false,
    });

    const get = await b.run(["config", "models", "get", "code_generation", "--json"]);
    expect(get.json()).toMatchObject({ category: "code_generation", source: "file", primary: { model: "gpt-4o" } });
    // The first set created the file from the default, which has a conversation entry; system has none.
    expect((await b.run(["config", "models", "get"])).stdout).toMatch(/^conversation \(from .*llm_router\.yaml\)\n/);
    const text = await b.run(["config", "models", "get", "system"]);
    expect(text.stdout).toBe(
      "system (default: no entry in llm_router.yaml)\n  primary:  assistant_embedded/default\n  fallback: assistant_core/core\n",
    );
    const table = await b.run(["config", "models", "routes"]);
    expect(table.stdout).toMatch(/^CATEGORY +PRIMARY +FALLBACK\n/);
    expect(table.stdout).toMatch(
      /\ncode_generation +cloud_a\/gpt-4o +local_server\/qwen2\.5-coder:7b, assistant_embedded\/default, assistant_core\/core\n/,
    );
  });

  it("tells to restart when a daemon is running", async () => {
    const b = box();
    mkdirSync(b.dataDir);
    // This test process stands in for a live daemon: only its pid is checked.
    const info = {
      pid: process.pid,
      port: 3876,
      bind: "127.0.0.1",
      version: "0",
      started_at: new Date().toISOString(),
    };
    writeFileSync(b.file("daemon.json"), JSON.stringify(info));
    const set = await b.run(["config", "models", "set", "conversation", "local_server", "llama3.2"]);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toContain("the daemon is running: restart it with `assistant restart` to apply the change");
  });

  it("refuses an unknown provider or category with exit 1, leaving the file byte-equal", async () => {
    const b = box();
    await b.run(["config", "models", "set", "conversation", "local_server", "llama3.2"]);
    const before = b.read("llm_router.yaml");
    const provider = await b.run(["config", "models", "set", "conversation", "openai", "gpt-4o"]);
    expect(provider).toMatchObject({ code: 1, stdout: "" });
    expect(provider.stderr).toBe(
      'error: unknown provider "openai": expected one of assistant_embedded, assistant_core, local_server, cloud_a, cloud_azure, cloud_b, lowbit_server\n',
    );
    const category = await b.run(["config", "models", "set", "bad/name", "local_server", "m"]);
    expect(category.code).toBe(1);
    expect(category.stderr).toMatch(/^error: unknown category "bad\/name"; the categories are conversation, /);
    // A typo is refused with the close match instead of creating a category nothing reads.
    const typo = await b.run(["config", "models", "set", "conversaton", "local_server", "m"]);
    expect(typo.code).toBe(1);
    expect(typo.stderr).toContain('unknown category "conversaton" (did you mean "conversation"?)');
    expect((await b.run(["config", "models", "get", "code_generatoin"])).stderr).toContain(
      '(did you mean "code_generation"?)',
    );
    expect(b.read("llm_router.yaml")).toBe(before);
  });

  it("an alias sets its category; remove-fallback and reset undo edits, and reset removes an entry a typo made", async () => {
    const b = box();
    const alias = await b.run(["config", "models", "set", "code", "local_server", "coder", "--json"]);
    expect(alias.code, alias.stderr).toBe(0);
    expect(alias.json()).toMatchObject({ category: "code_generation" });
    expect(Object.keys(b.yaml("llm_router.yaml").task_types)).not.toContain("code");
    expect(b.yaml("llm_router.yaml").task_types.code_generation.fallback).toEqual([
      { provider: "assistant_embedded", model: "default" },
      { provider: "assistant_core", model: "core" },
    ]);

    const removed = await b.run(["config", "models", "remove-fallback", "code", "assistant_embedded", "default"]);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toBe(
      [
        "removed assistant_embedded/default from the fallbacks of code_generation",
        "  primary:  local_server/coder",
        "  fallback: assistant_core/core",
        `saved to ${b.file("llm_router.yaml")}; the daemon uses it from its next start`,
        "",
      ].join("\n"),
    );
    const missing = await b.run(["config", "models", "remove-fallback", "code_generation", "cloud_a", "gpt-4o"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(
      "error: cloud_a/gpt-4o is not a fallback of code_generation; its fallbacks: assistant_core/core\n",
    );

    // An entry an older version let a typo create: reset accepts its name and removes it.
    const file = b.file("llm_router.yaml");
    writeFileSync(
      file,
      `${b.read("llm_router.yaml")}  conversaton:\n    primary: { provider: local_server, model: m }\n    fallback: []\n`,
    );
    expect((await b.run(["config", "models", "reset", "conversaton"])).code).toBe(0);
    expect(Object.keys(b.yaml("llm_router.yaml").task_types)).not.toContain("conversaton");

    const reset = await b.run(["config", "models", "reset", "code_generation"]);
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.stdout).toContain("code_generation: entry removed, the inherited route applies");
    expect(reset.stdout).toContain("  primary:  assistant_embedded/default");
    expect(b.yaml("llm_router.yaml").task_types.code_generation).toBeUndefined();
    expect((await b.run(["config", "models", "reset", "code_generation"])).stdout).toContain(
      "code_generation: nothing to change",
    );
  });
});

describe("assistant config provider", () => {
  it("add-cloud-a reads the key from standard input into the vault only; list never shows it", async () => {
    const b = box();
    expect((await b.run(["config", "env", "set", "ASSISTANT_LOG", "info"])).code).toBe(0);
    const add = await b.run(["config", "provider", "add-cloud-a", "--category", "conversation", "--model", "gpt-4o"], {
      input: `${SECRET}\n`,
    });
    expect(add.code, add.stderr).toBe(0);
    expect(add.stdout).toContain("stored the cloud_a API key in the vault as cloud_a_api_key\n");
    expect(add.stdout).toContain("conversation: primary cloud_a/gpt-4o (was assistant_embedded/default");
    expect(add.stderr).toBe("");

    expect((await b.run(["vault", "get", "cloud_a_api_key"])).stdout).toBe(`${SECRET}\n`);
    const router = b.read("llm_router.yaml");
    expect(router).toContain("api_key_ref: vault://cloud_a_api_key");
    expect(router).not.toContain(SECRET);
    expect(b.read("assistant.env")).not.toContain(SECRET);
    expect(existsSync(b.file("connectors.env"))).toBe(false);
    for (const { path, text } of allFileTexts(b.dataDir)) expect(text, path).not.toContain(SECRET);

    const list = await b.run(["config", "provider", "list", "--json"]);
    expect(list.code, list.stderr).toBe(0);
    const cloudA = list.json().providers.find((p: { id: string }) => p.id === "cloud_a");
    expect(cloudA).toMatchObject({ configured: true, key: "vault://cloud_a_api_key present" });
    const text = await b.run(["config", "provider", "list"]);
    expect(text.stdout).toMatch(/\ncloud_a +yes +- +vault:\/\/cloud_a_api_key present +conversation, /);
    for (const out of [add, list, text]) expect(out.stdout + out.stderr).not.toContain(SECRET);
  });

  it("list shows a vault secret as present without its value", async () => {
    const b = box();
    expect((await b.run(["vault", "set", "cloud_b_api_key"], { input: SECRET })).code).toBe(0);
    mkdirSync(b.dataDir, { recursive: true });
    writeFileSync(b.file("llm_router.yaml"), "providers:\n  cloud_b:\n    api_key_ref: vault://cloud_b_api_key\n");
    const list = await b.run(["config", "provider", "list"], { env: { CLOUD_A_API_KEY: SECRET } });
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/\ncloud_b +yes +- +vault:\/\/cloud_b_api_key present +-\n/);
    expect(list.stdout).toMatch(/\ncloud_a +yes +- +env CLOUD_A_API_KEY set +-\n/);
    expect(list.stdout).not.toContain(SECRET);
  });

  it("add-cloud-b warns about a key on the command line and refuses when no key is given at all", async () => {
    const b = box();
    const none = await b.run(["config", "provider", "add-cloud-b"]);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/^error: cloud_b needs an API key and the vault has none \(cloud_b_api_key\): pipe it/);
    expect(existsSync(b.file("llm_router.yaml"))).toBe(false);

    const flag = await b.run(["config", "provider", "add-cloud-b", "--api-key", SECRET, "--json"]);
    expect(flag.code, flag.stderr).toBe(0);
    expect(flag.stderr).toBe(
      "warning: a key given on the command line may be kept in your shell history; prefer piping it: `assistant config provider add-cloud-b < key.txt`\n",
    );
    expect(flag.json()).toEqual({
      provider: "cloud_b",
      file: b.file("llm_router.yaml"),
      api_key_ref: "vault://cloud_b_api_key",
      key_stored: true,
      daemon_running: false,
    });
    expect(b.read("llm_router.yaml")).not.toContain(SECRET);
  });

  it("set-local-server --no-probe writes base_url and sets a route; a bad URL is refused", async () => {
    const b = box();
    const bad = await b.run(["config", "provider", "set-local-server", "--url", "ftp://box:21"]);
    expect(bad).toMatchObject({
      code: 1,
      stderr: "error: invalid local server URL: expected an http:// or https:// URL\n",
    });
    expect(existsSync(b.file("llm_router.yaml"))).toBe(false);

    const set = await b.run([
      "config",
      "provider",
      "set-local-server",
      "--url",
      "http://192.168.1.20:11434",
      "--category",
      "data_analysis",
      "--model",
      "llama3.2",
      "--no-probe", // a server elsewhere, not running now: serverCommands.test.ts has the checks
      "--json",
    ]);
    expect(set.code, set.stderr).toBe(0);
    expect(set.json()).toMatchObject({
      provider: "local_server",
      base_url: "http://192.168.1.20:11434",
      route: { category: "data_analysis", primary: { provider: "local_server", model: "llama3.2" } },
    });
    const router = b.yaml("llm_router.yaml");
    expect(router.providers.local_server).toEqual({ base_url: "http://192.168.1.20:11434" });
    expect(router.task_types.data_analysis.primary).toEqual({ provider: "local_server", model: "llama3.2" });
    expect(readFileSync(b.file("llm_router.yaml"), "utf8")).toContain("# llm_router.yaml: which model answers");

    const list = await b.run(["config", "provider", "list", "--json"]);
    expect(list.json().providers[0]).toEqual({
      id: "local_server",
      configured: true,
      base_url: "http://192.168.1.20:11434",
      key: "none",
      used_by: ["data_analysis"],
    });
  });
});
