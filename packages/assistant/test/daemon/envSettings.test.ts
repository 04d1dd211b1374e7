import { spawn } from "node:child_process";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { daemonBin } from "../helpers/daemon.ts";
import { cleanUp, portOpen, sandbox, tempDir } from "./helpers.ts";

// One policy for a bad environment value: the daemon refuses to start, naming the variable and what it allows.
// Before the settings registry the daemon reacted in three ways: it refused some values, replaced others by the
// default (silently, or with a line in the log), and let others fail only when used (a plugin call, the embedded
// model, a tool). Each group is started here through the real daemon binary.

afterEach(cleanUp);

async function startDaemonWith(env: NodeJS.ProcessEnv, dataDir = tempDir()) {
  const child = spawn(process.execPath, [daemonBin], {
    env: { ...process.env, ASSISTANT_DATA_DIR: dataDir, ASSISTANT_PORT: "0", ASSISTANT_LOG: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  return { code, stderr, dataDir };
}

/** The daemon exits 78 (a start a restart cannot fix) with one line per bad variable, and leaves nothing behind. */
async function expectRefused(env: NodeJS.ProcessEnv, lines: string[]) {
  const run = await startDaemonWith(env);
  expect(run.code, run.stderr).toBe(78);
  expect(run.stderr).toBe(`assistant-daemon: environment: ${lines.join("\n  ")}\n`);
  expect(readdirSync(run.dataDir)).toEqual([]); // no database, log, token or daemon.json
}

describe("the daemon refuses to start on a bad value of one of its settings", () => {
  it("as it always did for the listen settings", async () => {
    await expectRefused({ ASSISTANT_PORT: "abc" }, [
      'ASSISTANT_PORT: must be a whole number from 0 to 65535 (got "abc")',
    ]);
  });

  it("for values it used to replace silently by the default", async () => {
    await expectRefused(
      {
        ASSISTANT_MEMORY_LEARNING: "no",
        ASSISTANT_EMBEDDED_THREADS: "-2",
        ASSISTANT_MAX_TOOL_ROUNDS: "lots",
        ASSISTANT_MAX_PARALLEL_SUBTASKS: "zero",
        ASSISTANT_COMMAND_SANDBOX: "strict",
        ASSISTANT_MEMORY_PROMPT_TOKENS: "0",
        ASSISTANT_GRAPH_EXPAND: "yes",
      },
      // In registry order.
      [
        'ASSISTANT_EMBEDDED_THREADS: must be a whole number of at least 1 (got "-2")',
        'ASSISTANT_MAX_TOOL_ROUNDS: must be a whole number from 1 to 100 (got "lots")',
        'ASSISTANT_MAX_PARALLEL_SUBTASKS: must be a whole number from 1 to 1000 (got "zero")',
        'ASSISTANT_COMMAND_SANDBOX: must be auto or off (got "strict")',
        'ASSISTANT_MEMORY_LEARNING: must be 1 or 0 (got "no")',
        'ASSISTANT_MEMORY_PROMPT_TOKENS: must be a whole number of tokens of at least 1 (got "0")',
        'ASSISTANT_GRAPH_EXPAND: must be 1 or 0 (got "yes")',
      ],
    );
  });

  it("for a value it used to log and replace by the default", async () => {
    await expectRefused({ ASSISTANT_MISSION_INTERIM_REPORT_SECS: "soon" }, [
      'ASSISTANT_MISSION_INTERIM_REPORT_SECS: must be a number of seconds greater than 0 (got "soon")',
    ]);
  });

  it("for values that used to fail only when used: plugin limits, the embedded model, tool endpoints", async () => {
    await expectRefused(
      {
        ASSISTANT_PLUGIN_TIMEOUT_MS: "-5",
        ASSISTANT_EMBEDDED_MODEL: "gpt_9",
        ASSISTANT_MESSAGE_WEBHOOK_URL: "hooks.example/T0KEN",
        ASSISTANT_WEB_SEARCH_URL: "file:///tmp/search",
      },
      [
        'ASSISTANT_EMBEDDED_MODEL: must be one of qwen3_0_6b, qwen2_5_0_5b, smollm2_360m, llama3_2_1b (got "gpt_9")',
        "ASSISTANT_MESSAGE_WEBHOOK_URL: must be an http or https URL: this is not a URL",
        "ASSISTANT_WEB_SEARCH_URL: must be an http or https URL: not file:",
        'ASSISTANT_PLUGIN_TIMEOUT_MS: must be a whole number of milliseconds of at least 1 (got "-5")',
      ],
    );
  });

  it("for a bad value in assistant.env as for one in the environment, and starts once it is fixed", async () => {
    const box = await sandbox();
    writeFileSync(join(box.dataDir, "assistant.env"), "ASSISTANT_APPROVAL_TIMEOUT_SECS=soon\n");
    const refused = await startDaemonWith({}, box.dataDir);
    expect(refused.code).toBe(78);
    expect(refused.stderr).toBe(
      'assistant-daemon: environment: ASSISTANT_APPROVAL_TIMEOUT_SECS: must be a whole number of seconds from 1 to 2592000 (got "soon")\n',
    );
    writeFileSync(join(box.dataDir, "assistant.env"), "ASSISTANT_APPROVAL_TIMEOUT_SECS=\n"); // blank: the default
    const start = await box.cli(["start"]);
    expect(start.code, start.stderr).toBe(0);
    expect(await box.cli(["stop"])).toMatchObject({ code: 0 });
  });
});

describe("CLI commands that read a setting say the same", () => {
  it("assistant start refuses before starting anything; status, doctor and config env say why", async () => {
    const box = await sandbox();
    writeFileSync(join(box.dataDir, "assistant.env"), "ASSISTANT_MAX_TOOL_ROUNDS=lots\n");
    const message = 'ASSISTANT_MAX_TOOL_ROUNDS: must be a whole number from 1 to 100 (got "lots")';

    const start = await box.cli(["start"]);
    expect(start).toMatchObject({ code: 1, stderr: `error: environment: ${message}\n` });
    expect(existsSync(join(box.dataDir, "daemon.json"))).toBe(false);
    expect(await portOpen(box.port)).toBe(false);

    const doctor = await box.cli(["doctor", "--json"]);
    expect(doctor.code).toBe(1);
    expect(JSON.parse(doctor.stdout).checks).toContainEqual(
      expect.objectContaining({ id: "settings", status: "fail", detail: message }),
    );
    const list = await box.cli(["config", "env", "list"]);
    expect(list.stdout).toMatch(
      /^ASSISTANT_MAX_TOOL_ROUNDS=lots +\(assistant\.env\) +invalid: must be a whole number/m,
    );
    const set = await box.cli(["config", "env", "set", "ASSISTANT_MAX_TOOL_ROUNDS", "many"]);
    expect(set).toMatchObject({
      code: 1,
      stderr: 'error: ASSISTANT_MAX_TOOL_ROUNDS: must be a whole number from 1 to 100 (got "many")\n',
    });

    // A command that only needs the listen address reads only that: a bad port is its own error.
    const status = await box.cli(["status"], { ASSISTANT_PORT: "abc" });
    expect(status).toMatchObject({
      code: 1,
      stderr: 'error: environment: ASSISTANT_PORT: must be a whole number from 0 to 65535 (got "abc")\n',
    });
  });

  it("assistant config models embedded-download checks the mirror it would download from", async () => {
    const box = await sandbox();
    const run = await box.cli(["config", "models", "embedded-download"], {
      ASSISTANT_EMBEDDED_MODEL_URL: "http://mirror.example/q.gguf",
    });
    expect(run).toMatchObject({
      code: 1,
      stderr:
        "error: environment: ASSISTANT_EMBEDDED_MODEL_URL: must be an https URL without credentials (http only on a loopback host): plain http is accepted only on a loopback host\n",
    });
  });
});
