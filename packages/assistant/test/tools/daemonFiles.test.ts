import { existsSync, linkSync, mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import type { ToolsPolicyInput } from "../../src/config/schemas/toolsPolicy.ts";
import { type ToolHarness, toolHarness } from "./harness.ts";

// The daemon's own files through the real tools, with a policy that allows everything under the folder holding
// the data directory (a user who allows their home folder): every escape form a model could try, and commands in
// the bubblewrap sandbox. Unit rules are in policy/daemonFiles.test.ts.

const linux = process.platform === "linux";
const TOKEN = "tok-canary-81f2a9c4d7e0-secret";
const VAULT = "vault-canary-5c1e77a0-sealed";

function wide(h: ToolHarness, extra: ToolsPolicyInput = {}): void {
  h.setPolicy({
    allowed_read_paths: [h.root],
    allowed_write_paths: [h.root],
    allowed_commands: ["*"],
    require_approval: [],
    ...extra,
  });
}

/** A harness whose data directory holds canary secrets, with the wide policy. */
function armed(env: NodeJS.ProcessEnv = {}): ToolHarness {
  const h = toolHarness({ env });
  writeFileSync(h.paths.authToken, TOKEN, { mode: 0o600 });
  writeFileSync(h.paths.vaultFile, VAULT, { mode: 0o600 });
  wide(h);
  return h;
}

const PROTECTED = /^protected: daemon data: /;

describe("the daemon's files through the file tools", () => {
  it("read_file refuses the secrets by every path form, naming the built-in rule", async () => {
    const h = armed();
    symlinkSync(h.paths.authToken, join(h.root, "token-link"));
    symlinkSync(h.paths.dataDir, join(h.root, "data-link"));
    const forms = [
      h.paths.authToken,
      relative(h.cwd, h.paths.authToken), // relative to the working directory
      join(h.paths.dataDir, "workspace", "..", "auth_token"),
      `${h.paths.dataDir}//./auth_token`,
      join(h.root, "token-link"),
      join(h.root, "data-link", "vault.json"),
      ...(linux ? [`/proc/self/root${h.paths.authToken}`, `/proc/${process.pid}/root${h.paths.vaultFile}`] : []),
    ];
    for (const path of forms) {
      const result = await h.invoke("read_file", { path });
      expect(result.status, path).toBe("denied");
      expect(result.rule, path).toMatch(PROTECTED);
      expect(result.output).not.toContain(TOKEN);
      expect(result.output).not.toContain(VAULT);
    }
  });

  it("read_file refuses a hard link to a secret made in an allowed folder", async () => {
    const h = armed();
    const link = join(h.root, "notes.txt");
    linkSync(h.paths.authToken, link);
    const result = await h.invoke("read_file", { path: link });
    expect(result).toMatchObject({ status: "denied", rule: expect.stringMatching(/hard link/) });
    expect(result.output).not.toContain(TOKEN);
  });

  it.runIf(linux)("read_file refuses the daemon's own environment in /proc", async () => {
    const h = armed();
    h.setPolicy({ allowed_read_paths: ["/proc"], require_approval: [] });
    for (const path of ["/proc/self/environ", `/proc/${process.pid}/environ`, "/proc/thread-self/environ"]) {
      expect((await h.invoke("read_file", { path })).rule, path).toMatch(PROTECTED);
    }
  });

  it("search never matches inside a secret, by its name or a hard link, and skips them silently", async () => {
    const h = armed();
    linkSync(h.paths.authToken, join(h.root, "copy.txt"));
    writeFileSync(join(h.root, "plain.txt"), `mentions ${TOKEN.slice(0, 10)}`);
    const result = await h.invoke("search", { query: TOKEN.slice(0, 10), path: h.root });
    expect(result.status).toBe("ok");
    expect(result.output).toContain("plain.txt:1:");
    expect(result.output).not.toContain(TOKEN);
    expect(result.output).toContain("1 match for");
    expect(result.output).not.toContain("skipped");
    const direct = await h.invoke("search", { query: "tok", path: h.paths.authToken });
    expect(direct.rule).toMatch(PROTECTED);
  });

  it("list_dir shows the names in the data directory, never their content", async () => {
    const h = armed();
    const result = await h.invoke("list_dir", { path: h.paths.dataDir });
    expect(result.status).toBe("ok");
    expect(result.output).toContain("auth_token");
    expect(result.output).not.toContain(TOKEN);
  });

  it("write_file never rewrites the policy, the router, plugins or skills, by any path", async () => {
    const h = armed();
    symlinkSync(h.paths.dataDir, join(h.root, "data-link"));
    const before = readFileSync(h.paths.toolsPolicy, "utf8");
    const targets = [
      h.paths.toolsPolicy,
      join(h.root, "data-link", "tools_policy.yaml"),
      relative(h.cwd, h.paths.toolsPolicy),
      h.paths.routerFile,
      h.paths.assistantEnv,
      join(h.paths.pluginsDir, "evil", "plugin.json"),
      join(h.paths.skillsDir, "evil", "SKILL.md"),
      h.paths.authToken,
      join(h.cwd, "llm_router.yaml"), // the router file the daemon also reads from its working directory
    ];
    for (const path of targets) {
      const result = await h.invoke("write_file", { path, content: "allowed_commands: ['*']\n" });
      expect(result.status, path).toBe("denied");
      expect(result.rule, path).toMatch(PROTECTED);
    }
    expect(readFileSync(h.paths.toolsPolicy, "utf8")).toBe(before);
    expect(existsSync(join(h.paths.pluginsDir, "evil"))).toBe(false);
    expect(readFileSync(h.paths.authToken, "utf8")).toBe(TOKEN);
    const ok = await h.invoke("write_file", { path: join(h.paths.workspaceDir, "notes.md"), content: "fine" });
    expect(ok.status).toBe("ok");
  });

  it("the effective view lists the built-in rule", () => {
    const view = armed().effective();
    expect(view.builtin_rules).toEqual([
      { rule: "protected: daemon data", description: expect.stringContaining("auth_token") },
    ]);
  });
});

describe.runIf(linux)("run_command in the bubblewrap sandbox", () => {
  it("commands cannot see the secrets or write the configuration; workspace/ is shared", async () => {
    const h = armed();
    expect(h.effective().command_sandbox).toMatchObject({ available: true });
    const data = h.paths.dataDir;
    const cat = await h.invoke("run_command", { command: `cat ${h.paths.authToken} ${h.paths.vaultFile}` });
    expect(cat.status).toBe("ok");
    expect(cat.output).toContain("No such file");
    expect(cat.output).not.toContain(TOKEN);
    expect(cat.output).not.toContain(VAULT);

    const ls = await h.invoke("run_command", { command: `ls -A ${data}` });
    expect(ls.output).toMatch(/--- stdout ---\nworkspace\n--- stderr ---/);

    const rewrite = await h.invoke("run_command", {
      command: `sh -c "echo 'allowed_commands: [x]' > ${h.paths.toolsPolicy}"`,
    });
    expect(rewrite.output).toContain("Read-only file system");
    expect(readFileSync(h.paths.toolsPolicy, "utf8")).toContain(h.root);

    const proc = await h.invoke("run_command", {
      command: `sh -c "cat /proc/${process.pid}/environ /proc/*/root${h.paths.authToken}; ls /proc | grep -c '^[0-9]'"`,
    });
    expect(proc.output).not.toContain(TOKEN);

    const shared = await h.invoke("run_command", {
      command: `sh -c "echo made-inside > ${join(h.paths.workspaceDir, "out.txt")}"`,
    });
    expect(shared.output).toContain("exit code 0");
    expect(readFileSync(join(h.paths.workspaceDir, "out.txt"), "utf8")).toBe("made-inside\n");
  });

  it("refuses file tools and commands once the data directory was moved and something else put at its path", async () => {
    const h = armed();
    expect((await h.invoke("run_command", { command: "true" })).status).toBe("ok");
    // What `mv <parent> <elsewhere>` by an earlier command would do, then a new folder where the data dir was.
    renameSync(h.paths.dataDir, `${h.paths.dataDir}-moved`);
    mkdirSync(h.paths.dataDir);
    wide(h);
    const moved = join(`${h.paths.dataDir}-moved`, "auth_token");
    for (const [tool, args] of [
      ["run_command", { command: `cat ${moved}` }],
      ["read_file", { path: moved }],
      ["search", { query: "tok", path: `${h.paths.dataDir}-moved` }],
    ] as const) {
      const result = await h.invoke(tool, args);
      expect(result, tool).toMatchObject({ status: "denied", rule: expect.stringMatching(/^protected: .*was moved/) });
      expect(result.output).not.toContain(TOKEN);
    }
  });

  it("a working directory inside the data directory but outside workspace/ is refused with the reason", async () => {
    const h = armed();
    mkdirSync(h.paths.logsDir, { recursive: true });
    const result = await h.invoke("run_command", { command: "ls", cwd: h.paths.logsDir });
    expect(result.status).toBe("error");
    expect(result.output).toContain("inside the assistant's data directory");
  });
});

describe("run_command without a sandbox (ASSISTANT_COMMAND_SANDBOX=off)", () => {
  it("says so in the effective view, needs consent for *, and warns on the session's first command", async () => {
    const h = armed({ ASSISTANT_COMMAND_SANDBOX: "off" });
    expect(h.effective().command_sandbox).toEqual({
      available: false,
      description: expect.stringMatching(/can read the assistant's own files.*unsandboxed_commands_acknowledged/),
    });
    const refused = await h.invoke("run_command", { command: "echo hi" });
    expect(refused).toMatchObject({ status: "denied", rule: expect.stringMatching(/no command sandbox/) });

    wide(h, { allowed_commands: ["echo"] });
    const first = await h.invoke("run_command", { command: "echo hi" }, { sessionId: "s-unsandboxed-1" });
    expect(first.output).toContain("note: commands run without a sandbox and can read the assistant's own files");
    const second = await h.invoke("run_command", { command: "echo hi" }, { sessionId: "s-unsandboxed-1" });
    expect(second.status).toBe("ok");
    expect(second.output).not.toContain("note:");

    wide(h, { unsandboxed_commands_acknowledged: true });
    expect((await h.invoke("run_command", { command: "echo hi" })).status).toBe("ok");
  });
});
