import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ENV_VARIABLES, PLANNED_ENV_VARIABLES, SETTING_KEYS } from "../../src/config/envVariables.ts";
import { readSettings, readSettingsOf } from "../../src/config/settings.ts";
import { ConfigError } from "../../src/util/errors.ts";
import { configError, tempData } from "./helpers.ts";

const root = resolve(import.meta.dirname, "..", "..");
const repo = resolve(root, "..", "..");
const REGISTERED = new Set([
  ...Object.values(ENV_VARIABLES).map((spec) => spec.name),
  ...PLANNED_ENV_VARIABLES.map((p) => p.name),
]);

function filesUnder(dir: string, ext: RegExp): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path, ext) : ext.test(name) ? [path] : [];
  });
}

/** `NAME` of every `NAME` match in the files, with where it was seen first. */
function namesIn(files: string[], pattern: RegExp): Map<string, string> {
  const names = new Map<string, string>();
  for (const file of files) {
    for (const match of readFileSync(file, "utf8").matchAll(pattern)) {
      const name = match[1]!;
      if (!names.has(name)) names.set(name, file.slice(repo.length + 1));
    }
  }
  return names;
}

describe("the registry covers every variable", () => {
  it("registers every ASSISTANT_* name the sources use", () => {
    const names = namesIn(filesUnder(join(root, "src"), /\.(ts|md)$/), /\b(ASSISTANT_[A-Z0-9_]*[A-Z0-9])\b/g);
    // A name cut at `_` is a prefix in a comment ("ASSISTANT_MAX_*_PER_SESSION"), not a variable.
    const missing = [...names].filter(([name]) => !REGISTERED.has(name) && !name.endsWith("_"));
    expect(missing, "add these to config/envVariables.ts").toEqual([]);
    expect(names.size).toBeGreaterThan(40);
  });

  it("registers every variable the sources read from an environment object", () => {
    const system = new Set(["LANG", "LC_ALL", "NO_COLOR", "USERPROFILE", "DISPLAY", "WAYLAND_DISPLAY"]);
    const names = namesIn(filesUnder(join(root, "src"), /\.ts$/), /\benv\??\.([A-Z][A-Z0-9_]+)/g);
    const missing = [...names].filter(([name]) => !REGISTERED.has(name) && !system.has(name) && !/^SSH_/.test(name));
    expect(missing, "add these to config/envVariables.ts").toEqual([]);
  });

  it("documents only registered ASSISTANT_* names", () => {
    const docs = [...filesUnder(join(repo, "docs"), /\.md$/), join(repo, "README.md")];
    const names = namesIn(docs, /\b(ASSISTANT_[A-Z0-9_]*[A-Z0-9])\b/g);
    expect([...names].filter(([name]) => !REGISTERED.has(name))).toEqual([]);
  });

  it("declares each name once, with a meaning, and reserves no name it also reads", () => {
    const names = Object.values(ENV_VARIABLES).map((spec) => spec.name);
    expect(new Set(names).size).toBe(names.length);
    expect(PLANNED_ENV_VARIABLES.filter((p) => names.includes(p.name))).toEqual([]);
    for (const spec of Object.values(ENV_VARIABLES)) expect(spec.meaning.length, spec.name).toBeGreaterThan(10);
  });
});

describe("readSettings", () => {
  it("gives the documented defaults when nothing is set, and for blank values", () => {
    const defaults = readSettings({});
    expect(defaults).toMatchObject({
      port: 3876,
      bind: "127.0.0.1",
      logLevel: "info",
      maxBodyBytes: 1_048_576,
      allowedHosts: [],
      studioPort: 5178,
      llmTimeoutSecs: undefined,
      llmStreamIdleSecs: 60,
      maxResponseTokens: 4096,
      systemTaskMaxTokens: 4096,
      degradedMode: false,
      embeddedModel: "qwen3_0_6b",
      embeddedGpu: true,
      maxToolRounds: 10,
      maxContextTokens: 8192,
      maxConcurrentDelegations: 15,
      maxParallelSubtasks: 4,
      approvalTimeoutSecs: 900,
      webSearchUrl: "https://api.search.brave.com/res/v1/web/search",
      commandSandbox: "auto",
      pluginTimeoutMs: 5000,
      pluginFuel: 10_000_000_000,
      pluginMaxMemoryMb: 64,
      pluginReputationThreshold: 50,
      memoryEmbeddings: { kind: "auto" },
      memoryLearning: true,
      memoryPromptTokens: 400,
      graphExpand: false,
      scheduleMinIntervalSecs: 60,
      missionInterimReportSecs: 300,
      agentDebug: false,
      logLlmResponse: false,
    });
    const blank = Object.fromEntries(Object.values(ENV_VARIABLES).map((spec) => [spec.name, "  "]));
    expect(readSettings(blank)).toEqual(defaults);
    // Secrets and the data directory are read by their owners, never copied into the settings.
    expect(Object.keys(defaults)).not.toContain("vaultMasterKey");
    expect(Object.keys(defaults)).not.toContain("searchApiKey");
    expect(Object.keys(defaults)).not.toContain("dataDir");
    // ...nor are the editor variables, read by the one command that opens an editor.
    expect(Object.keys(defaults)).not.toContain("editor");
    expect(Object.keys(defaults).length).toBe(SETTING_KEYS.length - 7);
  });

  it("parses each kind of value as written", () => {
    const settings = readSettings({
      ASSISTANT_PORT: " 4100 ",
      ASSISTANT_LOG: "DEBUG",
      ASSISTANT_ALLOWED_HOSTS: "Assistant.Example, 10.0.0.2 ,ghe.local:8443",
      ASSISTANT_LLM_FIRST_CHUNK_SECS: "0.5",
      ASSISTANT_DEGRADED_MODE: "1",
      ASSISTANT_PLUGIN_FUEL: "1e9",
      ASSISTANT_MEMORY_EMBEDDINGS: "lowbit_server:embed-model",
      ASSISTANT_COMMAND_SANDBOX: "OFF",
      ASSISTANT_EMBEDDED_MODEL_SHA256: "A".repeat(64),
      ASSISTANT_EMBEDDED_MODEL_URL: "http://127.0.0.1:8080/q.gguf",
    });
    expect(settings).toMatchObject({
      port: 4100,
      logLevel: "debug",
      allowedHosts: ["assistant.example", "10.0.0.2", "ghe.local:8443"],
      llmFirstChunkSecs: 0.5,
      degradedMode: true,
      pluginFuel: 1_000_000_000,
      memoryEmbeddings: { kind: "named", provider: "lowbit_server", model: "embed-model" },
      commandSandbox: "off",
      embeddedModelSha256: "a".repeat(64),
      embeddedModelUrl: "http://127.0.0.1:8080/q.gguf",
    });
  });

  it.each([
    ["ASSISTANT_PORT", "eighty", 'must be a whole number from 0 to 65535 (got "eighty")'],
    ["ASSISTANT_BIND", "my-laptop", 'must be an IP address such as 127.0.0.1 or 0.0.0.0 (got "my-laptop")'],
    ["ASSISTANT_LOG", "verbose", 'must be one of trace, debug, info, warn, error (got "verbose")'],
    ["ASSISTANT_MAX_TOOL_ROUNDS", "101", 'must be a whole number from 1 to 100 (got "101")'],
    ["ASSISTANT_MAX_CONTEXT_TOKENS", "100", 'must be a whole number of tokens from 256 to 2147483647 (got "100")'],
    ["ASSISTANT_LLM_TIMEOUT_SECS", "0", 'must be a number of seconds greater than 0, at most 86400 (got "0")'],
    ["ASSISTANT_MAX_COST_PER_SESSION_USD", "-1", 'must be a number greater than 0 (got "-1")'],
    ["ASSISTANT_GRAPH_EXPAND", "yes", 'must be 1 or 0 (got "yes")'],
    ["ASSISTANT_COMMAND_SANDBOX", "strict", 'must be auto or off (got "strict")'],
    ["ASSISTANT_MESSAGE_WEBHOOK_URL", "ftp://hooks.example/x", "must be an http or https URL: not ftp:"],
    ["ASSISTANT_EMBEDDED_MODEL_URL", "http://mirror.example/q.gguf", "plain http is accepted only on a loopback host"],
    ["ASSISTANT_ALLOWED_HOSTS", "a.example, bad host", 'must be host names separated by commas: "bad host" is not'],
    ["ASSISTANT_MEMORY_EMBEDDINGS", "assistant_core:x", "with a provider of assistant_embedded, local_server"],
    ["ASSISTANT_PLUGIN_REPUTATION_THRESHOLD", "101", 'must be a number from 0 to 100 (got "101")'],
  ])("refuses %s=%s naming the variable and what it allows", (name, value, reason) => {
    const error = configError(() => readSettings({ [name]: value }));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.file).toBe("environment");
    expect(error.key).toBe(name);
    expect(error.message).toContain(`environment: ${name}: `);
    expect(error.reason).toContain(reason);
  });

  it("takes IPv4 and IPv6 listen addresses and localhost, nothing else", () => {
    for (const bind of ["0.0.0.0", "192.168.1.20", "::", "::1", "fe80::1", "localhost"]) {
      expect(readSettings({ ASSISTANT_BIND: bind }).bind).toBe(bind);
    }
    for (const bind of ["256.1.1.1", "1.2.3", "1.2.3.4.5", "my-laptop", ":::1", "[::1]"]) {
      expect(() => readSettings({ ASSISTANT_BIND: bind }), bind).toThrow("ASSISTANT_BIND: must be an IP address");
    }
  });

  it("names every bad variable at once", () => {
    const error = configError(() => readSettings({ ASSISTANT_PORT: "x", ASSISTANT_LOG: "loud", ASSISTANT_BIND: "" }));
    expect(error.message).toBe(
      'environment: ASSISTANT_PORT: must be a whole number from 0 to 65535 (got "x")\n' +
        '  ASSISTANT_LOG: must be one of trace, debug, info, warn, error (got "loud")',
    );
  });

  it("never quotes a URL, which can carry a token", () => {
    const error = configError(() => readSettings({ ASSISTANT_MESSAGE_WEBHOOK_URL: "hooks.example/T0KEN" }));
    expect(error.message).not.toContain("T0KEN");
  });

  it("reads only the settings a CLI command asks for, with the same checks", () => {
    const env = { ASSISTANT_PORT: "4200", ASSISTANT_MAX_TOOL_ROUNDS: "lots" };
    expect(readSettingsOf(env, ["bind", "port"])).toEqual({ bind: "127.0.0.1", port: 4200 });
    expect(() => readSettingsOf(env, ["maxToolRounds"])).toThrow(
      'environment: ASSISTANT_MAX_TOOL_ROUNDS: must be a whole number from 1 to 100 (got "lots")',
    );
  });
});

describe("ASSISTANT_SPEC_DIR", () => {
  it("takes an existing readable folder, as an absolute path", () => {
    const data = tempData();
    const docs = join(data.projectRoot, "spec");
    mkdirSync(docs);
    expect(readSettings({ ASSISTANT_SPEC_DIR: docs }).specDir).toBe(docs);
    expect(readSettings({}).specDir).toBeUndefined();
  });

  it("refuses a folder that does not exist, and a file", () => {
    const data = tempData();
    const missing = join(data.projectRoot, "nowhere");
    expect(() => readSettings({ ASSISTANT_SPEC_DIR: missing })).toThrow(
      `environment: ASSISTANT_SPEC_DIR: must be an existing folder this user can read: ${missing} does not exist`,
    );
    const file = join(data.projectRoot, "notes.md");
    writeFileSync(file, "# notes\n");
    expect(() => readSettings({ ASSISTANT_SPEC_DIR: file })).toThrow(`${file} is not a folder`);
  });
});
