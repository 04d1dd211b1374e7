import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ToolsPolicyInput } from "../../src/config/schemas/toolsPolicy.ts";
import { redactSecrets } from "../../src/tools/builtin/runCommand.ts";
import { SAFE_PATH } from "../../src/tools/policy/commands.ts";
import { toolHarness } from "./harness.ts";

// run_command through the real runner and policy files: argv without a shell, the command allow and deny lists,
// PATH hijacks, working directories, timeouts and output caps that kill the whole process tree, approvals,
// vault injection with redaction, and the minimal environment.

const posix = process.platform !== "win32";
const CANARY = "canary-Zq81-secret-value-7731";

/** Auto-approving policy (require_approval empty) with the given commands. */
const policy = (commands: string[], extra: ToolsPolicyInput = {}): ToolsPolicyInput => ({
  allowed_commands: commands,
  require_approval: [],
  ...extra,
});

/** Whether a process runs (a zombie nobody reaped yet counts as gone). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return existsSync(`/proc/${pid}`) || process.platform !== "linux";
  }
}

/**
 * Host pids of live processes with `marker` as an argument. Commands run in the sandbox's own PID namespace, so a
 * pid they print means nothing out here; a unique `sleep` duration finds them from the outside.
 */
function withArgument(marker: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0").includes(marker) && alive(Number(name)))
        pids.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

async function gone(marker: string, ms = 2000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (withArgument(marker).length === 0) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return withArgument(marker).length === 0;
}

/** Markers of background processes a test started: killed after it, should the product have failed to. */
const strays: string[] = [];
afterEach(() => {
  for (const pid of strays.splice(0).flatMap(withArgument)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
});

/** A `sleep` duration no other process uses, cleaned up after the test. */
function uniqueSleep(): string {
  const marker = `29.${String(Math.floor(Math.random() * 1e6)).padStart(6, "0")}`;
  strays.push(marker);
  return marker;
}

/** The program printed the pid of the background child it started. */
function expectPid(output: string): void {
  expect(/PID=\d+/.test(output), output).toBe(true);
}

describe.runIf(posix)("run_command", () => {
  it("runs argv without a shell: metacharacters reach the program literally", async () => {
    const h = toolHarness({ policy: policy(["echo"]) });
    const result = await h.invoke("run_command", { command: "echo hi; rm -rf / && $(id) `id` $HOME *" });
    expect(result.status).toBe("ok");
    expect(result.output).toContain("$ echo hi; rm -rf / && $(id) `id` $HOME *");
    expect(result.output).toContain("exit code 0");
    expect(result.output).toContain("--- stdout ---\nhi; rm -rf / && $(id) `id` $HOME *\n");
    expect(result.output).toContain('source="output of echo"');
  });

  it("reports a non-zero exit as a normal result with stderr", async () => {
    const h = toolHarness({ policy: policy(["ls"]) });
    const result = await h.invoke("run_command", { command: "ls 'no such file here'" });
    expect(result.status).toBe("ok");
    expect(result.output).toMatch(/exit code [12]/);
    expect(result.output).toMatch(/--- stderr ---\n.*no such file here/);
  });

  it("denies a command allowed_commands does not list", async () => {
    const h = toolHarness({ policy: policy(["echo"]) });
    const result = await h.invoke("run_command", { command: "ls -la" });
    expect(result.status).toBe("denied");
    expect(result.rule).toBe("allowed_commands does not list ls");
    expect(result.source).toBe(h.paths.toolsPolicy);
  });

  it("lets blocked_commands win over [*], also through env", async () => {
    const h = toolHarness({ policy: policy(["*"], { blocked_commands: ["rm"] }) });
    writeFileSync(join(h.cwd, "victim"), "x");
    const direct = await h.invoke("run_command", { command: "rm victim" });
    expect(direct.status).toBe("denied");
    expect(direct.rule).toBe("blocked_commands: rm");
    const viaEnv = await h.invoke("run_command", { command: "env rm victim" });
    expect(viaEnv.status).toBe("denied");
    expect(viaEnv.rule).toBe("blocked_commands: rm (run through env)");
    const viaPath = await h.invoke("run_command", { command: "/bin/rm victim" });
    expect(viaPath.status).toBe("denied");
    expect(existsSync(join(h.cwd, "victim"))).toBe(true);
  });

  it("refuses a planted ./ls that would borrow the permission of ls", async () => {
    const h = toolHarness({ policy: policy(["ls"]) });
    const marker = join(h.root, "hijacked");
    writeFileSync(join(h.cwd, "ls"), `#!/bin/sh\necho pwned > '${marker}'\n`);
    chmodSync(join(h.cwd, "ls"), 0o755);
    const planted = await h.invoke("run_command", { command: "./ls" });
    expect(planted.status).toBe("error");
    expect(planted.output).toContain("is not the ls on the safe PATH");
    expect(existsSync(marker)).toBe(false);
    // The bare name is the system ls, which lists the planted file instead of running it.
    const real = await h.invoke("run_command", { command: "ls" });
    expect(real.status).toBe("ok");
    expect(real.output).toContain("exit code 0");
    expect(existsSync(marker)).toBe(false);
  });

  it("denies everything without a policy file", async () => {
    const h = toolHarness({ policy: null });
    const result = await h.invoke("run_command", { command: "echo hi" });
    expect(result.status).toBe("denied");
    expect(result.rule).toContain("tools_policy.yaml is missing");
  });

  it("explains parse errors and unknown programs", async () => {
    const h = toolHarness({ policy: policy(["*"]) });
    const quote = await h.invoke("run_command", { command: 'echo "unterminated' });
    expect(quote.status).toBe("error");
    expect(quote.output).toContain("unterminated double quote");
    const missing = await h.invoke("run_command", { command: "no-such-program-xyz" });
    expect(missing.status).toBe("error");
    expect(missing.output).toContain("no-such-program-xyz is not found on the safe PATH");
    const bad = await h.invoke("run_command", { command: "echo", timeout_secs: 0 });
    expect(bad.status).toBe("invalid_arguments");
  });

  it("kills the whole process tree on timeout, the policy timeout being the ceiling", async () => {
    const h = toolHarness({ policy: policy(["sh"], { command_timeout_secs: 1 }) });
    const started = Date.now();
    const marker = uniqueSleep();
    const result = await h.invoke("run_command", {
      command: `sh -c 'sleep ${marker} & echo PID=$!; sleep ${marker}'`,
      timeout_secs: 3600,
    });
    expect(Date.now() - started).toBeLessThan(4000);
    expect(result.status).toBe("ok");
    expect(result.output).toContain("killed: timeout after 1 s");
    expectPid(result.output);
    expect(await gone(marker)).toBe(true);
  });

  it("lets timeout_secs lower the default timeout", async () => {
    const h = toolHarness({ policy: policy(["sleep"]) });
    const started = Date.now();
    const result = await h.invoke("run_command", { command: "sleep 30", timeout_secs: 1 });
    expect(Date.now() - started).toBeLessThan(4000);
    expect(result.output).toContain("killed: timeout after 1 s");
  });

  it("kills background children left behind when the program exits", async () => {
    const h = toolHarness({ policy: policy(["sh"]) });
    const started = Date.now();
    const marker = uniqueSleep();
    const result = await h.invoke("run_command", { command: `sh -c 'sleep ${marker} & echo PID=$!'` });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(result.output).toContain("exit code 0");
    expectPid(result.output);
    expect(await gone(marker)).toBe(true);
  });

  it("caps endless output and kills the program", async () => {
    const h = toolHarness({ policy: policy(["yes"]) });
    const started = Date.now();
    let progressLines = 0;
    const result = await h.invoke("run_command", { command: "yes" }, { onProgress: () => progressLines++ });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result.status).toBe("ok");
    expect(result.output).toContain("killed: output over 1 MiB");
    expect(result.output).toContain("[stdout cut at 1048576 bytes; the program was killed]");
    expect(result.truncated).toBe(true);
    expect(progressLines).toBeLessThanOrEqual(1001);
  });

  it("captures slow output and streams it as progress while the program runs", async () => {
    const h = toolHarness({ policy: policy(["sh"]) });
    const progress: Array<{ text: string; at: number }> = [];
    const result = await h.invoke(
      "run_command",
      { command: `sh -c 'for i in 1 2 3 4 5; do echo line$i; sleep 0.2; done; echo oops >&2'` },
      { onProgress: (text) => progress.push({ text, at: Date.now() }) },
    );
    const done = Date.now();
    expect(result.status).toBe("ok");
    expect(result.output).toContain("line1\nline2\nline3\nline4\nline5");
    expect(result.output).toContain("--- stderr ---\noops");
    expect(progress.map((p) => p.text)).toEqual(["line1", "line2", "line3", "line4", "line5", "stderr: oops"]);
    expect(done - progress[0]!.at).toBeGreaterThan(500);
  });

  it("cancels the program when the call is aborted", async () => {
    const h = toolHarness({ policy: policy(["sleep"]) });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const started = Date.now();
    const result = await h.invoke("run_command", { command: "sleep 30" }, { signal: controller.signal });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(result.status).toBe("error");
    expect(result.output).toContain("cancelled");
  });

  it("needs a readable, existing directory as cwd", async () => {
    const h = toolHarness({ policy: policy(["pwd"], { allowed_read_paths: ["./inside"] }) });
    const inside = join(h.cwd, "inside");
    mkdirSync(inside);
    const ok = await h.invoke("run_command", { command: "pwd", cwd: "inside" });
    expect(ok.status).toBe("ok");
    expect(ok.output).toContain(`--- stdout ---\n${realpathSync(inside)}\n`);
    const outside = await h.invoke("run_command", { command: "pwd", cwd: h.root });
    expect(outside.status).toBe("denied");
    expect(outside.rule).toContain("allowed_read_paths does not cover");
    const missing = await h.invoke("run_command", { command: "pwd", cwd: "inside/nope" });
    expect(missing.status).toBe("error");
    expect(missing.output).toContain("does not exist");
  });

  it("runs in the task workspace when run_command_default_cwd_workspace is set", async () => {
    const h = toolHarness({ policy: policy(["pwd"], { run_command_default_cwd_workspace: true }) });
    const result = await h.invoke("run_command", { command: "pwd" });
    expect(result.status).toBe("ok");
    expect(existsSync(h.paths.workspaceDir)).toBe(true);
    expect(result.output).toContain(`--- stdout ---\n${realpathSync(h.paths.workspaceDir)}\n`);
    h.setPolicy(policy(["pwd"]));
    const plain = await h.invoke("run_command", { command: "pwd" });
    expect(plain.output).toContain(`--- stdout ---\n${realpathSync(h.cwd)}\n`);
  });

  it("waits for approval when run_command requires it", async () => {
    const h = toolHarness({ policy: { allowed_commands: ["echo"], require_approval: ["run_command"] } });
    const approved = h.invoke("run_command", { command: "echo approved-run" });
    await h.answerNext("approve");
    const ok = await approved;
    expect(ok.status).toBe("ok");
    expect(ok.output).toContain("approved-run");
    expect(ok.queue_item_id).toEqual(expect.any(String));

    const denied = h.invoke("run_command", { command: "echo denied-run" });
    await h.answerNext("deny");
    const no = await denied;
    expect(no.status).toBe("denied");
    expect(no.output).not.toContain("denied-run\n");
  });

  it("asks once per call even when the call touches a command and a working directory", async () => {
    const h = toolHarness();
    h.setPolicy({ allowed_commands: ["pwd"], allowed_read_paths: [h.cwd], require_approval: ["run_command"] });
    const pending = h.invoke("run_command", { command: "pwd", cwd: h.cwd });
    await h.answerNext("approve");
    const result = await pending;
    expect(result.status).toBe("ok");
    expect(result.output).toContain(h.cwd);
    expect(h.approvals.queue.list({}).items).toHaveLength(1);
  });

  it("injects a vault secret and redacts it everywhere", async () => {
    const h = toolHarness({
      secrets: { canary: CANARY },
      policy: { allowed_commands: ["printenv", "sh"], require_approval: ["run_command"] },
    });
    const progress: string[] = [];
    const pending = h.invoke(
      "run_command",
      { command: "VAULT:canary=CANARY printenv CANARY" },
      { onProgress: (t) => progress.push(t) },
    );
    const itemId = await h.answerNext("approve");
    const result = await pending;
    expect(result.status).toBe("ok");
    expect(result.output).toContain("$ printenv CANARY\n");
    expect(result.output).toContain("[REDACTED:canary]");
    expect(result.output).not.toContain(CANARY);
    expect(progress).toEqual(["[REDACTED:canary]"]);
    expect(JSON.stringify(h.eventsOf())).not.toContain(CANARY);
    expect(JSON.stringify(h.approvals.queue.get(itemId))).not.toContain(CANARY);

    // Output cut in the middle of the secret: the fragment is redacted too.
    const partial = h.invoke("run_command", { command: `VAULT:canary=CANARY sh -c 'printf "x%.10s" "$CANARY"'` });
    await h.answerNext("approve");
    const cut = await partial;
    expect(cut.output).toContain("--- stdout ---\nx[REDACTED:canary]\n");
    expect(cut.output).not.toContain(CANARY.slice(0, 10));
    expect(JSON.stringify(h.eventsOf())).not.toContain(CANARY.slice(0, 10));
  });

  it("refuses bad vault injections with a clear error", async () => {
    const h = toolHarness({ secrets: { canary: CANARY }, policy: policy(["echo"]) });
    const path = await h.invoke("run_command", { command: "VAULT:canary=PATH echo hi" });
    expect(path.status).toBe("error");
    expect(path.output).toContain("environment variable PATH may not be set from the vault");
    const missing = await h.invoke("run_command", { command: "VAULT:nokey=TOKEN echo hi" });
    expect(missing.status).toBe("error");
    expect(missing.output).toContain("vault key nokey is not set; add it with `assistant vault set nokey`");
    const malformed = await h.invoke("run_command", { command: "VAULT:canary echo hi" });
    expect(malformed.status).toBe("error");
    expect(malformed.output).toContain("malformed vault injection");
    for (const r of [path, missing, malformed]) expect(r.output).not.toContain(CANARY);
  });

  it("gives the program a minimal environment, never the daemon's", async () => {
    process.env.RUN_COMMAND_TEST_SECRET = "process-env-secret";
    try {
      const h = toolHarness({ policy: policy(["env"]), env: { SOME_SECRET: "daemon-env-secret", LANG: "C.UTF-8" } });
      const result = await h.invoke("run_command", { command: "env" });
      expect(result.status).toBe("ok");
      expect(result.output).not.toContain("SOME_SECRET");
      expect(result.output).not.toContain("RUN_COMMAND_TEST_SECRET");
      expect(result.output).toContain(`PATH=${SAFE_PATH}`);
      expect(result.output).toContain("TERM=dumb");
      expect(result.output).toContain("LANG=C.UTF-8");
      const names = result.output
        .split("\n")
        .filter((l) => /^[A-Z_][A-Z0-9_]*=/.test(l))
        .map((l) => l.slice(0, l.indexOf("=")))
        .filter((name) => name !== "PWD") // bubblewrap sets it to the working directory, nothing secret
        .sort();
      expect(names).toEqual(["HOME", "LANG", "PATH", "TERM"]);
    } finally {
      delete process.env.RUN_COMMAND_TEST_SECRET;
    }
  });
});

describe("redactSecrets", () => {
  const secrets = [{ key: "k", value: "abcdefghij" }];
  it("redacts whole values and a trailing prefix of at least 4 characters", () => {
    expect(redactSecrets("x abcdefghij y abcdefghij", secrets)).toBe("x [REDACTED:k] y [REDACTED:k]");
    expect(redactSecrets("out: abcdefg", secrets)).toBe("out: [REDACTED:k]");
    expect(redactSecrets("out: abc", secrets)).toBe("out: abc");
    expect(redactSecrets("abcd in the middle", secrets)).toBe("abcd in the middle");
  });
});
