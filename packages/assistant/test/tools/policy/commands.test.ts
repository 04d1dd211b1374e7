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

describe("launchers: shells and interpreters cannot run a blocked command", () => {
  const decide = (engine: ReturnType<typeof engineFor>, command: string) => {
    const argv = splitCommand(command);
    const executable = (argv[0] ?? "").slice((argv[0] ?? "").lastIndexOf("/") + 1); // as resolveExecutable names it
    return engine.decide({ kind: "command", tool: "run_command", executable, argv });
  };
  const STAR = "a shell or interpreter allowed by * could run it";
  const star = engineFor({ allowed_commands: ["*"], blocked_commands: ["rm"], require_approval: [] });

  it.each<[string, "allow" | "deny", string]>([
    // shells: refused whatever their arguments while anything is blocked
    [`sh -c "rm x"`, "deny", `blocked_commands: rm (${STAR}; name sh in allowed_commands to allow it)`],
    [`bash -c 'rm x'`, "deny", `blocked_commands: rm (${STAR}; name bash in allowed_commands to allow it)`],
    ["dash -c 'rm x'", "deny", STAR],
    ["zsh -c 'rm x'", "deny", STAR],
    ["fish -c 'rm x'", "deny", STAR],
    ["ksh -c 'rm x'", "deny", STAR],
    ["bash -ec 'rm x'", "deny", STAR],
    ["sh -xc 'rm x'", "deny", STAR],
    ["tcsh -c 'rm x'", "deny", STAR],
    ["pwsh -Command 'rm x'", "deny", STAR],
    ["sh -c 'echo ok'", "deny", "name sh in allowed_commands to allow it"],
    ["sh script.sh", "deny", "name sh in allowed_commands to allow it"],
    // interpreters: refused with inline code
    [`python3 -c 'import os; os.system("rm x")'`, "deny", `${STAR}; name python3 in allowed_commands to allow it`],
    ["python3.11 -c 'print(1)'", "deny", "name python3.11 in allowed_commands"],
    ["python3 -Ic 'print(1)'", "deny", STAR],
    ["python3 -m timeit 'import os'", "deny", STAR],
    [`perl -e 'system("rm x")'`, "deny", "name perl in allowed_commands"],
    ["perl5.36 -E 'say 1'", "deny", STAR],
    ["perl -lne 'print'", "deny", STAR],
    ["perl -pi.bak -e 's/a/b/' f", "deny", STAR],
    ["ruby -e 'system(%q(rm x))'", "deny", STAR],
    [`node -e 'require("child_process").execSync("rm x")'`, "deny", "name node in allowed_commands"],
    ["node --eval=1", "deny", STAR],
    ["node -pe 1", "deny", STAR],
    ["php -r 'system(\"rm x\");'", "deny", STAR],
    ["lua -e 'os.execute(\"rm x\")'", "deny", STAR],
    ["Rscript -e 'system(\"rm x\")'", "deny", STAR],
    ["osascript -e 'do shell script \"rm x\"'", "deny", STAR],
    ["deno eval 'new Deno.Command(\"rm\")'", "deny", STAR],
    ['bun -e \'Bun.spawn(["rm", "x"])\'', "deny", STAR],
    [`awk 'BEGIN{system("rm x")}'`, "deny", "name awk in allowed_commands"],
    [`awk '{print | "sh"}' f`, "deny", STAR],
    [`gawk '@load "filefuncs"'`, "deny", STAR],
    // awk's options are read the way each awk reads them: gawk groups letters, BWK awk ignores what it does not know
    [`awk -bv x=1 'BEGIN{system("rm x")}'`, "deny", STAR],
    [`original-awk -bv 'BEGIN{system("rm x")}' data`, "deny", STAR],
    [`awk -i 'BEGIN{system("rm x")}' /dev/null`, "deny", STAR],
    [`gawk -W 'source=BEGIN{system("rm x")}' /dev/null`, "deny", STAR],
    [`gawk -Wsource 'BEGIN{system("rm x")}' /dev/null`, "deny", STAR],
    [`gawk --so='BEGIN{system("rm x")}' /dev/null`, "deny", STAR],
    [`gawk --as x=1 'BEGIN{system("rm x")}'`, "deny", STAR],
    [`awk --sandbox 'BEGIN{system("rm x")}'`, "deny", STAR],
    [`awk -W sandbox 'BEGIN{system("rm x")}'`, "deny", STAR],
    [`gawk -e 'BEGIN{system("rm x")}' -E prog.awk --sandbox`, "deny", STAR],
    [`gawk -e 'BEGIN{system("rm x")}' -X -S`, "deny", STAR],
    [`goawk -o csv 'BEGIN{system("rm x")}'`, "deny", STAR],
    [`goawk -cpuprofile cpu.out 'BEGIN{system("rm x")}'`, "deny", STAR],
    ["sed 's/a/b/e' f", "deny", "name sed in allowed_commands"],
    ["sed -n '1e rm x' f", "deny", STAR],
    ["sed -e p -e '1 e rm x' f", "deny", STAR],
    ["sed 's/[/]/x/e' f", "deny", STAR],
    // the same programs with a script file, or code that cannot start a process, are ordinary commands
    ["python3 script.py -c config.ini", "allow", "allowed_commands: *"],
    ["python3 -m http.server", "allow", "allowed_commands: *"],
    ["perl -MFile::Temp script.pl", "allow", "allowed_commands: *"],
    ["ruby script.rb", "allow", "allowed_commands: *"],
    ["node app.js -p 8080", "allow", "allowed_commands: *"],
    ["node --require ./hook.js app.js -e x", "allow", "allowed_commands: *"],
    ["tclsh script.tcl", "allow", "allowed_commands: *"],
    ["awk '{print $1}' f", "allow", "allowed_commands: *"],
    ["awk -F: -v n=1 '$3 > n {print $1}' /etc/passwd", "allow", "allowed_commands: *"],
    ["awk -f prog.awk data", "allow", "allowed_commands: *"],
    [`gawk --sandbox 'BEGIN{system("rm x")}'`, "allow", "allowed_commands: *"],
    [`gawk -W sandbox 'BEGIN{system("rm x")}'`, "allow", "allowed_commands: *"],
    ["awk -v x=1 -f prog.awk", "allow", "allowed_commands: *"],
    ["awk -bv x=1 '{print}'", "allow", "allowed_commands: *"],
    [`gawk -dv x=1 'BEGIN{system("rm x")}'`, "allow", "allowed_commands: *"], // -dv: dump to v; x=1 is the program
    ["awk -F'|' -v OFS='|' '{print $1}' f", "allow", "allowed_commands: *"],
    ["awk -i inplace '{sub(/a/, \"b\")} 1' f", "allow", "allowed_commands: *"],
    ["sed 's/a/b/g' f", "allow", "allowed_commands: *"],
    ["sed -n '/re/!d;s|a|b|gp;y/abc/xyz/' f", "allow", "allowed_commands: *"],
    ["sed -i.bak -e '1a appended' -e '$d' f", "allow", "allowed_commands: *"],
    ["sed --sandbox 's/a/b/e' f", "allow", "allowed_commands: *"],
    // runners: what they run is checked like the command itself
    ["env sh -c 'rm x'", "deny", "blocked_commands: rm (sh run through env could run it; name sh in allowed_commands"],
    ["env -i PATH=/bin /bin/sh -c 'rm x'", "deny", "sh run through env could run it"],
    ["timeout 5 bash -c 'rm x'", "deny", "bash run through timeout could run it"],
    [`nice -n 5 python3 -c 'import os; os.system("rm x")'`, "deny", "python3 run through nice could run it"],
    ["xargs sh -c 'rm x'", "deny", "sh run through xargs could run it"],
    ["find . -exec sh -c 'rm {}' ';'", "deny", "sh run through find could run it"],
    ["busybox sh -c 'rm x'", "deny", "sh run through busybox could run it"],
    ["nohup stdbuf -o0 setsid sh -c 'rm x'", "deny", "sh run through"],
    ["env -S 'rm -rf x'", "deny", "blocked_commands: rm (run through env)"],
    ["watch 'rm x'", "deny", "sh run through watch could run it"],
    // watch reads -dx as -d with the value x: the string still goes through sh
    ["watch -dx 'rm x'", "deny", "sh run through watch could run it"],
    ["watch -n 2 'rm x'", "deny", "sh run through watch could run it"],
    ["watch --diff --int=2 'rm x'", "deny", "sh run through watch could run it"],
    ["watch -x rm x", "deny", "blocked_commands: rm (run through watch)"],
    ["flock /tmp/lock -c 'rm x'", "deny", "sh run through flock could run it"],
    ["find /bin -name 'r?' -exec {} x ';'", "deny", "blocked_commands: rm (find would run a command named only"],
    ["xargs -I X X file", "deny", "xargs would run a command named only when it runs"],
    ["env FOO=1 ls -la", "allow", "allowed_commands: *"],
    ["find . -name '*.txt' -exec grep -l foo {} +", "allow", "allowed_commands: *"],
    ["xargs -I{} cp {} /tmp", "allow", "allowed_commands: *"],
    ["timeout 5 python3 script.py", "allow", "allowed_commands: *"],
    ["watch -n 5 -x ls", "allow", "allowed_commands: *"],
    ["watch -d -x ls", "allow", "allowed_commands: *"],
    ["watch -xd ls", "allow", "allowed_commands: *"],
    ["watch --ex ls -l", "allow", "allowed_commands: *"],
  ])("under * with rm blocked: %j -> %s", (command, effect, rule) => {
    const decision = decide(star, command);
    expect(decision).toMatchObject({ effect, source: "/data/tools_policy.yaml" });
    expect(decision.rule).toContain(rule);
  });

  it("catches absolute shell paths, which reach the engine by their base name", () => {
    for (const [path, name] of [
      ["/bin/sh", "sh"],
      ["/usr/bin/bash", "bash"],
    ] as const) {
      const resolved = resolveExecutable(path, { cwd: "/" });
      if (!("name" in resolved)) throw new Error(`${path} not found`);
      expect(resolved.name).toBe(name);
      const argv = [path, "-c", "rm x"];
      expect(star.decide({ kind: "command", tool: "run_command", executable: resolved.name, argv })).toMatchObject({
        effect: "deny",
        rule: `blocked_commands: rm (${STAR}; name ${name} in allowed_commands to allow it)`,
      });
    }
  });

  const named = engineFor({
    allowed_commands: ["*", "sh", "bash", "zsh", "fish", "python3", "awk", "sed"],
    blocked_commands: ["rm", "curl"],
    require_approval: [],
  });
  it.each<[string, "allow" | "deny", string]>([
    ["sh -c 'echo ok'", "allow", "allowed_commands: sh"],
    ["sh -c 'echo ok; rm x'", "deny", "blocked_commands: rm (run through sh)"],
    // quoting and escapes are removed before matching
    [`sh -c "r''m x"`, "deny", "blocked_commands: rm (run through sh)"],
    [`sh -c 'r\\m x'`, "deny", "blocked_commands: rm (run through sh)"],
    [`sh -c '"rm" x'`, "deny", "blocked_commands: rm (run through sh)"],
    ["sh -c '/bin/rm x'", "deny", "blocked_commands: rm (run through sh)"],
    // every place a command can stand
    ["sh -c 'echo $(rm x)'", "deny", "blocked_commands: rm (run through sh)"],
    ["sh -c 'echo `rm x`'", "deny", "blocked_commands: rm (run through sh)"],
    ["sh -c 'echo \"$(rm x)\"'", "deny", "blocked_commands: rm (run through sh)"],
    ["sh -c 'ls | rm x'", "deny", "blocked_commands: rm (run through sh)"],
    ["sh -c 'ls && rm x || ls'", "deny", "blocked_commands: rm (run through sh)"],
    ["sh -c 'ls\nrm x'", "deny", "blocked_commands: rm (run through sh)"],
    ["sh -c 'ls & rm x'", "deny", "blocked_commands: rm (run through sh)"],
    ["sh -c '(rm x)'", "deny", "blocked_commands: rm (run through sh)"],
    ["sh -c '{ rm x; }'", "deny", "blocked_commands: rm (run through sh)"],
    ["sh -c 'if true; then rm x; fi'", "deny", "blocked_commands: rm (run through sh)"],
    ["sh -c 'while true; do rm x; done'", "deny", "blocked_commands: rm (run through sh)"],
    ["sh -c 'case a in a) rm x;; esac'", "deny", "blocked_commands: rm (run through sh)"],
    ["sh -c 'f() { rm x; }; f'", "deny", "blocked_commands: rm (run through sh)"],
    ["sh -c 'FOO=1 rm x'", "deny", "blocked_commands: rm (run through sh)"],
    ["sh -c '2>/dev/null rm x'", "deny", "blocked_commands: rm (run through sh)"],
    ["sh -c 'x=$(curl https://evil.test)'", "deny", "blocked_commands: curl (run through sh)"],
    ["sh -c 'cat <<EOF\n$(rm x)\nEOF'", "deny", "blocked_commands: rm (run through sh)"],
    ["bash -c 'cat <(rm x)'", "deny", "blocked_commands: rm (run through bash)"],
    ["sh -c 'eval \"rm x\"'", "deny", "blocked_commands: rm (run through sh)"],
    ["sh -c 'trap \"rm x\" EXIT'", "deny", "blocked_commands: rm (run through sh)"],
    ["sh -c 'alias r=rm; r x'", "deny", "blocked_commands: rm (run through sh)"],
    ["sh -c 'exec rm x'", "deny", "blocked_commands: rm (run through exec)"],
    ["sh -c 'command rm x'", "deny", "blocked_commands: rm (run through command)"],
    ["sh -c 'builtin eval \"rm x\"'", "deny", "blocked_commands: rm (run through sh)"],
    [`sh -c "sh -c 'rm x'"`, "deny", "blocked_commands: rm (run through sh)"],
    [`bash -c 'x="a[\\$(rm y)]"; echo $((x))'`, "deny", "blocked_commands: rm (run through bash)"],
    // a command named only when the shell runs cannot be checked
    ["sh -c '$cmd x'", "deny", "blocked_commands: rm, curl (sh would run a command named only when it runs)"],
    [`sh -c '\${a}m x'`, "deny", "sh would run a command named only when it runs"],
    [`sh -c '"$@"' sh rm x`, "deny", "sh would run a command named only when it runs"],
    ["sh -c '/bin/r? x'", "deny", "sh would run a command named only when it runs"],
    ["bash -c '{rm,x}'", "deny", "bash would run a command named only when it runs"],
    [`bash -c "$'\\\\x72m' x"`, "deny", "bash would run a command named only when it runs"],
    ["sh -c 'env $c x'", "deny", "env would run a command named only when it runs"],
    ["sh -c 'eval \"$x\"'", "deny", "sh's inline code is only known when it runs"],
    ["sh -c 'echo rm x | sh'", "deny", "sh would read its program from standard input"],
    ["sh -c 'echo \"import os\" | python3'", "deny", "python3 would read its program from standard input"],
    ["sh -c '. /dev/stdin'", "deny", "sh would source a script only known when it runs"],
    ["zsh -c 'ls *(e:\"rm x\":)'", "deny", "blocked_commands: rm (named in zsh's inline code)"],
    ["zsh -c '=rm x'", "deny", "zsh would run a command named only when it runs"],
    [`sh -c 'echo "unterminated'`, "deny", "sh's inline code cannot be checked: unterminated double quote"],
    // a shell or interpreter inside is explicit only when listed itself
    [`sh -c 'python3 -c "print(1)"'`, "allow", "allowed_commands: sh"],
    [`sh -c 'perl -e "print 1"'`, "deny", "perl run through sh could run it; name perl in allowed_commands"],
    [`sh -c 'dash -c "ls"'`, "deny", "dash run through sh could run it; name dash in allowed_commands"],
    [`sh -c 'env dash -c ls'`, "deny", "dash run through env could run it"],
    // fish quotes differently: what is quoted for sh runs in fish
    [`sh -c "echo 'x\\\\' ; echo ' ; rm y ; ' #'"`, "allow", "allowed_commands: sh"],
    [`fish -c "echo 'x\\\\' ; echo ' ; rm y ; ' #'"`, "deny", "blocked_commands: rm (run through fish)"],
    ["fish -c 'echo (rm x)'", "deny", "blocked_commands: rm (run through fish)"],
    ["fish -c 'true; and rm x'", "deny", "blocked_commands: rm (run through fish)"],
    ["fish -c '(echo rm) x'", "deny", "fish would run a command named only when it runs"],
    ["fish -c 'set n (count *.txt); echo $n'", "allow", "allowed_commands: fish"],
    ["bash -c 'hash -p /bin/rm ls; ls x'", "deny", "blocked_commands: rm (run through hash)"],
    // ordinary shell code passes
    [`sh -c 'for f in *.txt; do wc -l "$f"; done'`, "allow", "allowed_commands: sh"],
    [`sh -c 'case "$1" in *.md) echo doc;; *) echo other;; esac' sh a.md`, "allow", "allowed_commands: sh"],
    ["sh -c 'git status && make test 2>&1 | tail -5'", "allow", "allowed_commands: sh"],
    [`bash -c 'x=$((a*b)); echo "$x"; [[ $x == *0 ]] && echo ten'`, "allow", "allowed_commands: bash"],
    [`sh -c '[ -f x ] || echo "missing $HOME"'`, "allow", "allowed_commands: sh"],
    [`sh -c 'cat <<"EOF"\nrm is not run here\nEOF'`, "allow", "allowed_commands: sh"],
    [`sh -c 'find . -name "*.log" -exec sh -c "wc -l \\"\\$1\\"" _ {} ";"'`, "allow", "allowed_commands: sh"],
    // interpreters named explicitly: their code is scanned for blocked names (best effort)
    [`python3 -c 'import os; os.system("rm x")'`, "deny", "blocked_commands: rm (named in python3's inline code)"],
    [`python3 -c 'import subprocess; subprocess.run(["/bin/rm", "x"])'`, "deny", "named in python3's inline code"],
    ["python3 -c 'print(sum(range(10)))'", "allow", "allowed_commands: python3"],
    [`awk 'BEGIN{system("rm x")}'`, "deny", "blocked_commands: rm (named in awk's inline code)"],
    [`awk '{print | "sort"}' f`, "allow", "allowed_commands: awk"],
    [`awk -bv x=1 'BEGIN{system("rm x")}'`, "deny", "blocked_commands: rm (named in awk's inline code)"],
    ["watch -dx 'rm x'", "deny", "blocked_commands: rm (run through sh)"],
    ["watch -d -n 2 'ls | wc -l'", "allow", "allowed_commands: *"],
    ["sed '1e rm x' f", "deny", "blocked_commands: rm (named in sed's inline code)"],
  ])("with the launcher named: %j -> %s", (command, effect, rule) => {
    const decision = decide(named, command);
    expect(decision).toMatchObject({ effect, source: "/data/tools_policy.yaml" });
    expect(decision.rule).toContain(rule);
  });

  it("changes nothing while no command is blocked", () => {
    const open = engineFor({ allowed_commands: ["*"], require_approval: [] });
    for (const command of ["sh -c 'rm x'", `python3 -c 'import os; os.system("rm x")'`, "env sh -c 'rm x'"]) {
      expect(decide(open, command)).toMatchObject({ effect: "allow", rule: "allowed_commands: *" });
    }
  });

  it("without * a runner still cannot reach an unlisted shell, and an unlisted shell keeps its own rule", () => {
    const listed = engineFor({ allowed_commands: ["env", "sh"], blocked_commands: ["rm"], require_approval: [] });
    expect(decide(listed, "bash -c ls")).toMatchObject({ effect: "deny", rule: "allowed_commands does not list bash" });
    expect(decide(listed, "env bash -c ls")).toMatchObject({
      effect: "deny",
      rule: "blocked_commands: rm (bash run through env could run it; name bash in allowed_commands to allow it)",
    });
    expect(decide(listed, "env sh -c ls")).toMatchObject({ effect: "allow", rule: "allowed_commands: env" });
    expect(decide(listed, "sh -c 'bash -c ls'")).toMatchObject({
      effect: "deny",
      rule: expect.stringContaining("bash run through sh"),
    });
  });

  it("stays fast and refuses on hostile input instead of working through it", () => {
    const hostile = [
      `sh -c '${"$(".repeat(2000)}${")".repeat(2000)}'`,
      `env ${"python3 -W x ".repeat(600)}`,
      `sh -c '${"env ".repeat(2000)}ls'`,
      `sh -c "${'sh -c \\"'.repeat(12)}"`,
    ];
    for (const command of hostile) {
      const started = performance.now();
      const decision = decide(named, command);
      expect(performance.now() - started).toBeLessThan(200);
      expect(decision.effect, command.slice(0, 40)).toBe("deny");
    }
  });
});
