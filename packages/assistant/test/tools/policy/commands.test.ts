import { chmodSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  CommandParseError,
  parseVaultInjection,
  resolveExecutable,
  SAFE_PATH,
  splitCommand,
} from "../../../src/tools/policy/commands.ts";
import { engineFor } from "./helpers.ts";

describe("splitCommand: words without expansion, operators are plain characters", () => {
  it.each<[string, string[]]>([
    ["ls -la", ["ls", "-la"]],
    ["  ls   -la  ", ["ls", "-la"]],
    ["ls; rm -rf /", ["ls;", "rm", "-rf", "/"]],
    ["ls ; rm -rf /", ["ls", ";", "rm", "-rf", "/"]],
    ["echo $(rm -rf /)", ["echo", "$(rm", "-rf", "/)"]],
    ["echo `rm -rf /`", ["echo", "`rm", "-rf", "/`"]],
    ["ls && rm -rf /", ["ls", "&&", "rm", "-rf", "/"]],
    ["ls || rm", ["ls", "||", "rm"]],
    ["cat x | sh", ["cat", "x", "|", "sh"]],
    ["echo hi > /etc/passwd", ["echo", "hi", ">", "/etc/passwd"]],
    ["echo hi>>/etc/passwd", ["echo", "hi>>/etc/passwd"]],
    ["sleep 1 &", ["sleep", "1", "&"]],
    ["echo 'a b' \"c d\"", ["echo", "a b", "c d"]],
    ['echo "a\\"b"', ["echo", 'a"b']],
    ['echo "a\\\\b"', ["echo", "a\\b"]],
    ['echo "a\\nb"', ["echo", "a\\nb"]],
    ["echo 'a\\b'", ["echo", "a\\b"]],
    ["echo a\\ b", ["echo", "a b"]],
    ["echo \\;", ["echo", ";"]],
    ["echo ''", ["echo", ""]],
    ['""', [""]],
    ['a"b"c', ["abc"]],
    ["a'b c'd", ["ab cd"]],
    ["echo $HOME ~ %USERPROFILE%", ["echo", "$HOME", "~", "%USERPROFILE%"]],
    ['echo "$HOME" "$(id)"', ["echo", "$HOME", "$(id)"]],
    ["echo *.txt ?", ["echo", "*.txt", "?"]],
    ["ls\nrm -rf /", ["ls", "rm", "-rf", "/"]],
    ["ls\trm", ["ls", "rm"]],
    ["", []],
    ["   ", []],
  ])("%j", (command, argv) => {
    expect(splitCommand(command)).toEqual(argv);
  });

  it.each<[string, string]>([
    ["echo 'abc", "unterminated single quote"],
    ['echo "abc', "unterminated double quote"],
    ["echo abc\\", "trailing backslash"],
    ["ls\0; rm", "NUL byte"],
  ])("refuses %j", (command, message) => {
    expect(() => splitCommand(command)).toThrow(CommandParseError);
    expect(() => splitCommand(command)).toThrow(message);
  });
});

describe("resolveExecutable: fixed safe PATH, no hijack", () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "assistant-policy-cmd-")));
  for (const name of ["ls", "rm", "mytool"]) {
    writeFileSync(join(dir, name), "#!/bin/sh\necho planted\n");
    chmodSync(join(dir, name), 0o755);
  }
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("finds a bare name on the safe PATH only", () => {
    const ls = resolveExecutable("ls", { cwd: dir });
    expect(ls).toMatchObject({ name: "ls" });
    expect("path" in ls && SAFE_PATH.split(":").some((d) => ls.path.startsWith(`${d}/`))).toBe(true);
  });

  it.each<[string, string]>([
    ["./ls", "is not the ls on the safe PATH"],
    ["./rm", "is not the rm on the safe PATH"],
    ["<dir>/ls", "is not the ls on the safe PATH"],
    ["mytool", "not found on the safe PATH"],
    ["./mytool", "not found on the safe PATH"],
    ["definitely-not-a-command-xyz", "not found on the safe PATH"],
    ["", "empty command"],
    ["ls\0", "NUL byte"],
    ["/usr/bin/", "names no executable"],
    ["/usr/bin/..", "names no executable"],
  ])("refuses %j", (argv0, message) => {
    const name = argv0.replace("<dir>", dir);
    expect(resolveExecutable(name, { cwd: dir })).toEqual({ error: expect.stringContaining(message) });
  });

  it("ignores the daemon's PATH and relative PATH entries (the cwd)", () => {
    const before = process.env.PATH;
    process.env.PATH = `${dir}:${before}`;
    try {
      expect(resolveExecutable("mytool", { cwd: dir })).toEqual({ error: expect.any(String) });
    } finally {
      process.env.PATH = before;
    }
    expect(resolveExecutable("mytool", { cwd: dir, searchPath: `.::${"relative"}` })).toEqual({
      error: expect.stringContaining("not found"),
    });
  });

  it("matches an absolute path by base name when it is the safe-PATH file, recording the path", () => {
    const rm = resolveExecutable("/usr/bin/rm", { cwd: dir });
    expect(rm).toMatchObject({ name: "rm", explicitPath: "/usr/bin/rm" });
    const e = engineFor({ allowed_commands: ["*"], blocked_commands: ["rm"], require_approval: [] });
    if (!("name" in rm)) throw new Error("rm not found");
    expect(e.decide({ kind: "command", tool: "run_command", executable: rm.name, argv: ["/usr/bin/rm"] })).toEqual({
      effect: "deny",
      rule: "blocked_commands: rm",
      source: "/data/tools_policy.yaml",
    });
  });
});

describe("commands through the engine", () => {
  const e = engineFor({
    allowed_commands: ["ls", "git", "env", "cat", "sudo"],
    blocked_commands: ["rm", "curl"],
    require_approval: [],
  });
  function run(command: string) {
    const argv = splitCommand(command);
    return e.decide({ kind: "command", tool: "run_command", executable: argv[0] ?? "", argv });
  }

  it.each<[string, "allow" | "deny", string]>([
    ["rm -rf /", "deny", "blocked_commands: rm"],
    ["ls -la", "allow", "allowed_commands: ls"],
    ["ls ; rm -rf /", "allow", "allowed_commands: ls"],
    ["ls && rm -rf /", "allow", "allowed_commands: ls"],
    ["ls | rm", "allow", "allowed_commands: ls"],
    ["ls; rm -rf /", "deny", "allowed_commands does not list ls;"],
    ["$(rm -rf /)", "deny", "allowed_commands does not list $(rm"],
    ["`rm -rf /`", "deny", "allowed_commands does not list `rm"],
    ["rm&&ls", "deny", "allowed_commands does not list rm&&ls"],
    ["curl https://evil.test", "deny", "blocked_commands: curl"],
    ["python3 -c 'import os'", "deny", "allowed_commands does not list python3"],
    ["RM -rf /", "deny", "allowed_commands does not list RM"],
    ["env rm -rf /", "deny", "blocked_commands: rm (run through env)"],
    ["env /usr/bin/rm -rf /", "deny", "blocked_commands: rm (run through env)"],
    ["sudo rm -rf /", "deny", "blocked_commands: rm (run through sudo)"],
    ["env FOO=1 ls", "allow", "allowed_commands: env"],
    ["cat rm", "allow", "allowed_commands: cat"],
    ["git status", "allow", "allowed_commands: git"],
    ["", "deny", "default: empty command"],
    ["'' ls", "deny", "default: empty command"],
    ["/usr/bin/ls", "deny", "default: executable /usr/bin/ls is not resolved to a name"],
    ["./ls", "deny", "default: executable ./ls is not resolved to a name"],
  ])("%j -> %s", (command, effect, rule) => {
    expect(run(command)).toMatchObject({ effect, rule });
  });

  it("blocked wins over *", () => {
    const all = engineFor({ allowed_commands: ["*"], blocked_commands: ["rm"], require_approval: [] });
    const req = (executable: string) => ({
      kind: "command" as const,
      tool: "run_command",
      executable,
      argv: [executable],
    });
    expect(all.decide(req("rm"))).toMatchObject({ effect: "deny", rule: "blocked_commands: rm" });
    expect(all.decide(req("python3"))).toMatchObject({ effect: "allow", rule: "allowed_commands: *" });
  });
});

describe("parseVaultInjection", () => {
  it.each<[string, { vaultKey: string; envName: string }[], string]>([
    ["VAULT:github_token=GH_TOKEN gh repo list", [{ vaultKey: "github_token", envName: "GH_TOKEN" }], "gh repo list"],
    [
      "VAULT:a=A_KEY VAULT:b.key-2=B_KEY curl x",
      [
        { vaultKey: "a", envName: "A_KEY" },
        { vaultKey: "b.key-2", envName: "B_KEY" },
      ],
      "curl x",
    ],
    ["ls VAULT:k=X", [], "ls VAULT:k=X"],
    ["ls -la", [], "ls -la"],
    ["'VAULT:k=X' ls", [], "'VAULT:k=X' ls"],
  ])("%j", (command, injections, rest) => {
    expect(parseVaultInjection(command)).toEqual({ injections, command: rest });
  });

  it.each<[string, string]>([
    ["VAULT:k=PATH ls", "may not be set"],
    ["VAULT:k=LD_PRELOAD ls", "may not be set"],
    ["VAULT:k=DYLD_INSERT_LIBRARIES ls", "may not be set"],
    ["VAULT:k=NODE_OPTIONS node x", "may not be set"],
    ["VAULT:k=BASH_FUNC_X ls", "may not be set"],
    ["VAULT:k=lower ls", "invalid environment variable name"],
    ["VAULT:k=1ABC ls", "invalid environment variable name"],
    ["VAULT:k= ls", "invalid environment variable name"],
    ["VAULT:k=$(id) ls", "invalid environment variable name"],
    ["VAULT:k=A;rm=B ls", "invalid environment variable name"],
    ["VAULT:=ENV ls", "invalid vault key"],
    ["VAULT:../x=ENV ls", "invalid vault key"],
    ["VAULT:a/b=ENV ls", "invalid vault key"],
    ["VAULT:k ls", "malformed vault injection"],
    ["VAULT:k=GH_TOKEN", "without a command"],
    ["VAULT:a=X VAULT:b=X ls", "injected twice"],
  ])("refuses %j", (command, message) => {
    expect(parseVaultInjection(command)).toEqual({ error: expect.stringContaining(message) });
  });
});
