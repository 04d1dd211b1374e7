import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { scriptedRouterYaml, startScriptedDaemon } from "../agent/helpers.ts";
import { api as apiCall, type TestDaemon, tempDataDir } from "../helpers/daemon.ts";
import { type ScriptedServer, startOpenAiServer } from "../llm/servers/openaiServer.ts";

// The launcher rule end to end: run_command on a real daemon with `allowed_commands: ['*']` and rm blocked,
// over HTTP invoke and from the agent loop (a scripted model). Shells, an absolute shell path, a runner in front of
// a shell and an interpreter given code are refused and the file they aim at survives; naming sh in
// allowed_commands lets sh run, with every command in its code checked. The control shows rm really deletes here
// when nothing blocks it.

const posix = process.platform !== "win32";
let daemon: TestDaemon;
let model: ScriptedServer;
let work: string;

const invoke = (command: string) => apiCall(daemon, "POST", "/api/tools/run_command/invoke", { command }, daemon.token);
const writePolicy = (policy: Record<string, unknown>) =>
  writeFileSync(
    join(daemon.dataDir, "tools_policy.yaml"),
    // acknowledged so `*` works on machines without a command sandbox too
    stringify({ require_approval: [], unsandboxed_commands_acknowledged: true, ...policy }),
  );
function target(name: string): string {
  const file = join(work, name);
  writeFileSync(file, "keep me");
  return file;
}

beforeAll(async () => {
  work = tempDataDir("assistant-launchers-work-");
  model = await startOpenAiServer();
  const dataDir = tempDataDir();
  writeFileSync(join(dataDir, "llm_router.yaml"), scriptedRouterYaml(model.url));
  daemon = await startScriptedDaemon(dataDir);
}, 60_000);
afterAll(async () => {
  await daemon?.stop();
  await model?.close();
  if (daemon) rmSync(daemon.dataDir, { recursive: true, force: true });
  if (work) rmSync(work, { recursive: true, force: true });
});

describe.runIf(posix)("run_command cannot run a blocked command through a shell or interpreter", () => {
  it("control: with nothing blocked, sh -c rm deletes the file", async () => {
    writePolicy({ allowed_commands: ["*"] });
    const file = target("control");
    const res = await invoke(`sh -c "rm ${file}"`);
    expect(res.status, res.body).toBe(200);
    expect(res.json().result.status).toBe("ok");
    expect(existsSync(file)).toBe(false);
  });

  it.each<[string, (file: string) => string, string]>([
    ["sh -c", (f) => `sh -c "rm ${f}"`, "name sh in allowed_commands"],
    ["an absolute bash path", (f) => `/bin/bash -c "rm ${f}"`, "name bash in allowed_commands"],
    ["env in front of sh", (f) => `env sh -c "rm ${f}"`, "sh run through env could run it"],
    ["python3 -c", (f) => `python3 -c "import os; os.system('rm ${f}')"`, "name python3 in allowed_commands"],
  ])("under * with rm blocked, %s is refused and the file stays", async (_name, command, rule) => {
    writePolicy({ allowed_commands: ["*"], blocked_commands: ["rm"] });
    const file = target("victim");
    const res = await invoke(command(file));
    expect(res.status, res.body).toBe(403);
    expect(res.json().error.details.rule).toContain("blocked_commands: rm (");
    expect(res.json().error.details.rule).toContain(rule);
    expect(existsSync(file)).toBe(true);
  });

  it("from the agent loop, the model is told the rule and the file stays", async () => {
    writePolicy({ allowed_commands: ["*"], blocked_commands: ["rm"] });
    const file = target("agent");
    const commands = [`sh -c "rm ${file}"`, `env bash -c "rm ${file}"`, `python3 -c "import os; os.remove('${file}')"`];
    model.enqueue(
      ...commands.map((command) => ({ kind: "tool_call" as const, name: "run_command", arguments: { command } })),
      { kind: "reply", text: "Could not." },
    );
    const res = await apiCall(daemon, "POST", "/api/message", { message: "Delete it.", wait: true }, daemon.token);
    expect(res.json().reply).toBe("Could not.");
    const last = model.requests.at(-1)!.body as { messages: Array<{ role: string; content: unknown }> };
    const results = last.messages.filter((m) => m.role === "tool").map((m) => JSON.stringify(m.content));
    expect(results).toHaveLength(commands.length);
    for (const result of results) expect(result).toContain("blocked_commands: rm (");
    expect(existsSync(file)).toBe(true);
  });

  it("with sh named in allowed_commands, sh runs and its code is checked command by command", async () => {
    writePolicy({ allowed_commands: ["*", "sh"], blocked_commands: ["rm"] });
    const ok = await invoke(`sh -c "echo ok"`);
    expect(ok.status, ok.body).toBe(200);
    expect(ok.json().result.output).toContain("ok");
    const file = target("named");
    for (const command of [`sh -c "echo ok; rm ${file}"`, `sh -c "echo $(rm ${file})"`, `sh -c "r''m ${file}"`]) {
      const res = await invoke(command);
      expect(res.status, command).toBe(403);
      expect(res.json().error.details.rule).toBe("blocked_commands: rm (run through sh)");
    }
    expect(existsSync(file)).toBe(true);
  });
});
