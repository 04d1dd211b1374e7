import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closedPort } from "../llm/providers/helpers.ts";
import { startOllamaServer } from "../llm/servers/ollamaServer.ts";
import { type ScriptedServer, startOpenAiServer } from "../llm/servers/openaiServer.ts";
import { allFileTexts, modeOf, sandbox } from "./helpers.ts";

const EMBEDDED = { provider: "assistant_embedded", model: "default" };
const CORE = { provider: "assistant_core", model: "core" };
const INIT_FILES = ["agent_profile.json", "assistant.env", "llm_router.yaml", "tools_policy.yaml"];

describe("assistant init --defaults", () => {
  it("creates the data directory with the default embedded route, a deny-by-default policy, a profile and the language", async () => {
    const box = sandbox();
    const res = await box.run(["init", "--defaults"]);
    expect(res.code, res.stderr).toBe(0);
    expect(readdirSync(box.dataDir).sort()).toEqual(INIT_FILES);
    expect(modeOf(box.dataDir)).toBe(0o700);
    for (const name of INIT_FILES) {
      expect(res.stdout).toMatch(new RegExp(`created\\s+${name.replace(".", "\\.")}`));
      expect(modeOf(box.file(name))).toBe(0o600);
    }

    const router = box.yaml("llm_router.yaml");
    expect(router.task_types.conversation).toEqual({ primary: EMBEDDED, fallback: [CORE] });
    expect(router.providers).toBeUndefined();
    expect(box.read("llm_router.yaml")).toMatch(/^# llm_router\.yaml/); // the commented starter, not a bare dump

    const policy = box.yaml("tools_policy.yaml");
    for (const key of [
      "allowed_read_paths",
      "allowed_write_paths",
      "allowed_commands",
      "allowed_web_domains",
      "allowed_device_interfaces",
    ]) {
      expect(policy[key], key).toEqual([]);
    }
    expect(policy.web_search_enabled).toBe(false);
    expect(policy.browser_enabled).toBe(false);
    expect(policy.default_profile).toBeUndefined();

    expect(JSON.parse(box.read("agent_profile.json"))).toMatchObject({
      name: "Assistant",
      role: expect.any(String),
      rules: expect.any(Array),
    });
    expect(box.read("assistant.env")).toMatch(/^ASSISTANT_LANG=en$/m);

    const next = await box.run(["config", "validate"]);
    expect(next.code, next.stderr).toBe(0);
  });

  it("keeps existing files on a second run and reports them as skipped; --force replaces them", async () => {
    const box = sandbox();
    expect((await box.run(["init", "--defaults"])).code).toBe(0);
    const mine = "# my own policy\nallowed_commands: [git]\n";
    writeFileSync(box.file("tools_policy.yaml"), mine);
    const routerBefore = box.read("llm_router.yaml");

    const again = await box.run(["init", "--defaults", "--json"]);
    expect(again.code, again.stderr).toBe(0);
    const result = again.json();
    expect(result.files.map((f: { action: string }) => f.action)).toEqual(["skipped", "skipped", "skipped", "skipped"]);
    expect(result.files.find((f: { file: string }) => f.file === "tools_policy.yaml").reason).toMatch(/already exists/);
    expect(box.read("tools_policy.yaml")).toBe(mine);
    expect(box.read("llm_router.yaml")).toBe(routerBefore);

    const forced = await box.run(["init", "--defaults", "--force"]);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toMatch(/overwritten\s+tools_policy\.yaml/);
    expect(box.yaml("tools_policy.yaml").allowed_commands).toEqual([]);
  });

  it("does not touch an ASSISTANT_LANG the user already set, but adds it to an env file that lacks it", async () => {
    const box = sandbox();
    const res1 = await box.run(["config", "env", "set", "ASSISTANT_LANG", "fr"]);
    expect(res1.code, res1.stderr).toBe(0);
    const kept = await box.run(["init", "--defaults"]);
    expect(kept.stdout).toMatch(/skipped\s+assistant\.env \(ASSISTANT_LANG is already set to "fr"/);
    expect(box.read("assistant.env")).toMatch(/^ASSISTANT_LANG=fr$/m);

    const other = sandbox();
    await other.run(["config", "env", "set", "ASSISTANT_LOG", "debug"]);
    const added = await other.run(["init", "--defaults"]);
    expect(added.stdout).toMatch(/updated\s+assistant\.env/);
    expect(other.read("assistant.env")).toMatch(/^ASSISTANT_LOG=debug$/m);
    expect(other.read("assistant.env")).toMatch(/^ASSISTANT_LANG=en$/m);
  });
});

// Local model servers init asks before writing: one speaking Ollama's API, one OpenAI's (LM Studio, vLLM...).
let ollama: ScriptedServer;
let openai: ScriptedServer;
beforeAll(async () => {
  [ollama, openai] = await Promise.all([
    startOllamaServer({ models: [{ name: "llama3.2:latest" }, { name: "qwen2.5:7b" }] }),
    startOpenAiServer({ models: [{ id: "fake-7b", object: "model" }] }),
  ]);
});
afterAll(async () => {
  await Promise.all([ollama.close(), openai.close()]);
});

describe("assistant init answering questions on standard input", () => {
  it("sets up a local model server first, with the embedded model and core as fallbacks", async () => {
    const box = sandbox();
    const res = await box.run(["init"], { input: `Jarvis\nfr\nlocal_server\n${ollama.url}\nqwen2.5:7b\n` });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain("Name of your assistant [Assistant]: Jarvis");
    expect(res.stdout).toContain("Provider [embedded]: local_server");
    expect(res.stdout).toContain(
      "  it answers; it lists 2 models: llama3.2:latest, qwen2.5:7b\nModel [llama3.2:latest]: qwen2.5:7b",
    );

    const router = box.yaml("llm_router.yaml");
    expect(router.providers).toEqual({ local_server: { base_url: ollama.url } });
    expect(router.task_types.conversation).toEqual({
      primary: { provider: "local_server", model: "qwen2.5:7b" },
      fallback: [EMBEDDED, CORE],
    });
    expect(JSON.parse(box.read("agent_profile.json")).name).toBe("Jarvis");
    expect(box.read("assistant.env")).toMatch(/^ASSISTANT_LANG=fr$/m);

    // A route the user chose is healthy for doctor, and doctor --fix leaves it alone.
    const before = box.read("llm_router.yaml");
    const doctor = await box.run(["doctor", "--fix", "--json"], { env: { ASSISTANT_PORT: "0" } });
    expect(doctor.json().checks.find((c: { id: string }) => c.id === "router.default_route").status).toBe("ok");
    expect(box.read("llm_router.yaml")).toBe(before);
  });

  it("takes the defaults for empty answers (and for answers that never come)", async () => {
    const box = sandbox();
    const res = await box.run(["init"], { input: "\n\n" });
    expect(res.code, res.stderr).toBe(0);
    expect(box.yaml("llm_router.yaml").task_types.conversation.primary).toEqual(EMBEDDED);
    expect(JSON.parse(box.read("agent_profile.json")).name).toBe("Assistant");
  });

  it("refers a cloud provider's key to the vault and never writes a key, even one in the environment", async () => {
    const box = sandbox();
    const secret = "sk-test-0123456789abcdef-secret";
    const res = await box.run(["init"], { input: "Ada\nen\n5\n\n", env: { CLOUD_A_API_KEY: secret } });
    expect(res.code, res.stderr).toBe(0);
    const router = box.yaml("llm_router.yaml");
    expect(router.providers.cloud_a).toEqual({ api_key_ref: "vault://cloud_a_api_key" });
    expect(router.task_types.conversation.primary).toEqual({ provider: "cloud_a", model: "gpt-4o-mini" });
    expect(router.task_types.conversation.fallback).toEqual([EMBEDDED, CORE]);
    expect(res.stdout).toContain("assistant vault set cloud_a_api_key");
    for (const { path, text } of allFileTexts(box.dataDir)) {
      expect(text, path).not.toContain(secret);
      expect(text, path).not.toMatch(/api_key\s*[:=]\s*["']?[A-Za-z0-9-]{12,}/);
    }
  });

  it("asks cloud_b for a model name and refuses an invalid answer without writing anything", async () => {
    const box = sandbox();
    const missing = await box.run(["init"], { input: "Ada\nen\ncloud_b\n\n" });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error: model: /m);

    const bad = await box.run(["init"], { input: "Ada\ngerman\n" });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^error: language: expected one of en, fr/m);
    const badUrl = await box.run(["init"], { input: "Ada\nen\n2\nftp://server\n" });
    expect(badUrl.code).toBe(1);
    expect(badUrl.stderr).toMatch(/server_url: expected an http:\/\/ or https:\/\/ URL/);
    expect(existsSync(box.dataDir)).toBe(false);
  });
});

describe("assistant init with a local model server", () => {
  it("offers Ollama, an OpenAI-compatible server and llama-server; the model defaults to the first one listed", async () => {
    const box = sandbox();
    const res = await box.run(["init"], { input: `Ada\nen\n3\n${openai.url}/v1\n\n` });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain(
      [
        "  2) ollama         an Ollama server you run",
        "  3) openai_server  an OpenAI-compatible server you run: LM Studio (port 1234), vLLM (8000)…",
        "  4) llama_server   llama.cpp's llama-server (port 8080)",
      ].join("\n"),
    );
    expect(res.stdout).toContain("Server URL [http://localhost:1234/v1]: ");
    expect(res.stdout).toContain("Model [fake-7b]: \n"); // an empty answer takes the default
    const router = box.yaml("llm_router.yaml");
    expect(router.providers).toEqual({ lowbit_server: { base_url: `${openai.url}/v1` } });
    expect(router.task_types.conversation).toEqual({
      primary: { provider: "lowbit_server", model: "fake-7b" },
      fallback: [EMBEDDED, CORE],
    });
    expect((await box.run(["init", "--force"], { input: "Ada\nen\n4\n" })).stdout).toContain(
      "Server URL [http://localhost:8080/v1]: ",
    );
  });

  it("refuses the wrong kind of server, a model it does not list and a server that does not answer", async () => {
    const box = sandbox();
    const wrongKind = await box.run(["init"], { input: `Ada\nen\nollama\n${openai.url}/v1\n` });
    expect(wrongKind.code).toBe(1);
    expect(wrongKind.stderr).toContain(
      "and local_server speaks Ollama's API: choose openai_server (3) or llama_server (4) instead",
    );
    const otherWay = await box.run(["init"], { input: `Ada\nen\nllama_server\n${ollama.url}\n` });
    expect(otherWay.stderr).toContain("which lowbit_server speaks: choose ollama (2) instead");

    const unknown = await box.run(["init"], { input: `Ada\nen\n2\n${ollama.url}\nmistral\n` });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe(
      'error: model: the server has no model "mistral"; it lists 2 models: llama3.2:latest, qwen2.5:7b\n',
    );
    const closed = `http://127.0.0.1:${await closedPort()}`;
    const down = await box.run(["init"], { input: `Ada\nen\n2\n${closed}\n\n` });
    expect(down.stderr).toContain(`error: cannot reach ${closed} (ECONNREFUSED): start the server or check the URL`);
    expect(existsSync(box.dataDir)).toBe(false);

    // --no-probe: for a server that is not running yet.
    const later = await box.run(["init", "--no-probe"], { input: `Ada\nen\n2\n${closed}\n\n` });
    expect(later.code, later.stderr).toBe(0);
    expect(box.yaml("llm_router.yaml").task_types.conversation.primary).toEqual({
      provider: "local_server",
      model: "llama3.2",
    });
  });
});

describe("assistant init with an unusable data directory", () => {
  it("fails with a clear message when the data directory is below a regular file", async () => {
    const box = sandbox();
    const blocker = join(box.root, "not-a-folder");
    writeFileSync(blocker, "x");
    const res = await box.run(["init", "--defaults"], { env: { ASSISTANT_DATA_DIR: join(blocker, "data") } });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(
      `error: the data directory cannot be used: cannot create ${join(blocker, "data")}: ${blocker} is a file, not a folder`,
    );
    expect(res.stderr).toContain("ASSISTANT_DATA_DIR");
  });
});
