import { describe, expect, it } from "vitest";
import { dataPaths } from "../../../src/config/paths.ts";
import { daemonFiles, isSecretName } from "../../../src/tools/policy/daemonFiles.ts";
import type { PersistentDecision, ToolRequest } from "../../../src/tools/policy/types.ts";
import { engineFor } from "./helpers.ts";

// The built-in `protected: daemon data` rule in the engine: which paths of the data directory no read or write
// reaches, that nothing lifts it (allow lists covering /, allow_all, persistent decisions, a missing file), and
// the wildcard-command consent when there is no command sandbox.

const DATA = "/home/ann/assistant";
const paths = dataPaths(DATA);
const JOURNAL = "/var/log/assistant-journal.jsonl";
const files = (caseInsensitive = false) =>
  daemonFiles({ paths, extraNoWrite: [JOURNAL], pids: [4242, 4343], caseInsensitive });
const WIDE = {
  allowed_read_paths: ["/"],
  allowed_write_paths: ["/"],
  allowed_commands: ["*"],
  require_approval: [],
};
const read = (path: string, tool = "read_file"): ToolRequest => ({ kind: "read", tool, path });
const write = (path: string, tool = "write_file"): ToolRequest => ({ kind: "write", tool, path });
const engine = (extra: Parameters<typeof engineFor>[1] = {}) => engineFor(WIDE, { daemonFiles: files(), ...extra });

const SECRETS = [
  "auth_token",
  "vault.json",
  "vault.key",
  "vault.json.lock",
  "assistant.db",
  "assistant.db-wal",
  "assistant.db-shm",
  "assistant.db-journal",
  "daemon.json",
  "supervisor.json",
  ".auth_token.0a1b2c3d4e5f.tmp",
  ".vault.json.0a1b2c3d4e5f.tmp",
];

describe("protected: daemon data", () => {
  it.each(SECRETS)("no tool reads or writes %s", (name) => {
    for (const request of [read(`${DATA}/${name}`), read(`${DATA}/${name}`, "search"), write(`${DATA}/${name}`)]) {
      const decision = engine().decide(request);
      expect(decision.effect).toBe("deny");
      expect(decision.rule).toMatch(/^protected: daemon data: /);
      expect(decision.source).toMatch(/^built-in rule/);
    }
  });

  it.each([
    "llm_router.yaml",
    "tools_policy.yaml",
    "assistant.env",
    "connectors.env",
    "agent_profile.json",
    "autonomous_mission.yaml",
    "voice_router.yaml",
    "mcp.json",
    "plugins/p/plugin.json",
    "plugins/p/new.wasm",
    "skills/s/SKILL.md",
    "skills/new",
    "models/qwen.gguf",
    "logs/daemon.log",
    "logs/tools_journal.jsonl",
    "reports/r.md",
    "",
  ])("no tool writes %s in the data directory", (name) => {
    const decision = engine().decide(write(name ? `${DATA}/${name}` : DATA));
    expect(decision).toMatchObject({ effect: "deny", rule: expect.stringMatching(/^protected: daemon data: /) });
  });

  it("config files stay readable, and workspace/ is the one place tools write in the data directory", () => {
    for (const name of ["llm_router.yaml", "tools_policy.yaml", "logs/daemon.log", "skills/s/SKILL.md"]) {
      expect(engine().decide(read(`${DATA}/${name}`)).effect).toBe("allow");
    }
    expect(engine().decide(write(`${DATA}/workspace/notes.md`)).effect).toBe("allow");
    expect(engine().decide(read(`${DATA}/workspace/notes.md`)).effect).toBe("allow");
    // Only the data directory's own names: the same names elsewhere are ordinary files.
    expect(engine().decide(read("/home/ann/projects/auth_token")).effect).toBe("allow");
    expect(engine().decide(write("/home/ann/projects/tools_policy.yaml")).effect).toBe("allow");
    expect(engine().decide(write(`${DATA}-backup/x`)).effect).toBe("allow");
  });

  it("a lock file anywhere in the data directory is not read", () => {
    expect(engine().decide(read(`${DATA}/models/qwen.gguf.part.lock`)).effect).toBe("deny");
  });

  it("the write journal outside the data directory is readable but never written", () => {
    expect(engine().decide(read(JOURNAL)).effect).toBe("allow");
    expect(engine().decide(write(JOURNAL)).rule).toMatch(/^protected: daemon data: /);
  });

  it("the daemon's and its supervisor's /proc entries are never read (the environment holds keys)", () => {
    for (const path of ["/proc/4242/environ", "/proc/4343/environ", "/proc/self/environ", "/proc/thread-self/mem"]) {
      expect(engine().decide(read(path)).rule).toMatch(/^protected: daemon data: /);
    }
    expect(engine().decide(read("/proc/42420/status")).effect).toBe("allow");
  });

  it("nothing lifts it: allow_all, persistent allow decisions, an explicit allow list entry", () => {
    const decisions: PersistentDecision[] = [
      { id: "1", tool: "read_file", scope: "*", effect: "allow" },
      { id: "2", tool: "write_file", scope: DATA, effect: "allow" },
    ];
    const e = engineFor(
      { ...WIDE, allowed_read_paths: [`${DATA}/auth_token`], require_approval: ["read_file", "write_file"] },
      { daemonFiles: files(), decisions, mode: "allow_all" },
    );
    expect(e.decide(read(`${DATA}/auth_token`)).rule).toMatch(/^protected: daemon data: /);
    expect(e.decide(write(`${DATA}/tools_policy.yaml`)).rule).toMatch(/^protected: daemon data: /);
  });

  it("is named even when there is no policy file at all", () => {
    const e = engineFor(null, { daemonFiles: files() });
    expect(e.decide(read(`${DATA}/auth_token`)).rule).toMatch(/^protected: daemon data: /);
    expect(e.decide(read("/tmp/x")).rule).toMatch(/missing/);
  });

  it("matches whatever the case on a case-insensitive file system", () => {
    const e = engineFor(WIDE, { daemonFiles: files(true), caseInsensitive: true });
    expect(e.decide(read("/HOME/Ann/Assistant/AUTH_TOKEN")).effect).toBe("deny");
    expect(e.decide(write("/home/ann/ASSISTANT/Tools_Policy.YAML")).effect).toBe("deny");
    expect(e.decide(write("/home/ann/assistant/WORKSPACE/a")).effect).toBe("allow");
  });

  it("recognises the secret names and their temporary copies only", () => {
    expect(SECRETS.every(isSecretName)).toBe(true);
    expect(["llm_router.yaml", "tools_policy.yaml", "workspace", "notes.md"].some(isSecretName)).toBe(false);
  });
});

describe("allowed_commands: ['*'] without a command sandbox", () => {
  const cmd = (executable: string): ToolRequest => ({
    kind: "command",
    tool: "run_command",
    executable,
    argv: [executable],
  });

  it("allows nothing through * until the policy acknowledges it; named commands still run", () => {
    const unsandboxed = engineFor(WIDE, { commandSandbox: false });
    expect(unsandboxed.decide(cmd("cat"))).toMatchObject({
      effect: "deny",
      rule: expect.stringMatching(/^protected: daemon data: no command sandbox.*unsandboxed_commands_acknowledged/),
    });
    const named = engineFor({ ...WIDE, allowed_commands: ["*", "git"] }, { commandSandbox: false });
    expect(named.decide(cmd("git")).effect).toBe("allow");
    const acknowledged = engineFor({ ...WIDE, unsandboxed_commands_acknowledged: true }, { commandSandbox: false });
    expect(acknowledged.decide(cmd("cat"))).toMatchObject({ effect: "allow", rule: "allowed_commands: *" });
    expect(engineFor(WIDE, { commandSandbox: true }).decide(cmd("cat")).effect).toBe("allow");
  });
});
