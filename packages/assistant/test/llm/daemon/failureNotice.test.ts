import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startScriptedDaemon } from "../../agent/helpers.ts";
import { type TestDaemon, tempDataDir } from "../../helpers/daemon.ts";
import { runCli } from "../../setup/helpers.ts";
import { type ScriptedServer, startOpenAiServer } from "../servers/openaiServer.ts";

// What a person sees when the model server they configured stops (docs/models.md#when-a-model-fails): a real daemon
// routes `conversation` to a local OpenAI-protocol server as lowbit_server/fake-7b; the real `assistant chat` runs
// against it before and after that server is stopped. The other half of the newcomer test (discover, set up, first
// answer) lives with the models commands.

let server: ScriptedServer;
let backup: ScriptedServer;
let daemon: TestDaemon;
let dataDir: string;
let port: string;

const KEY = "sk-failure-notice-secret";

beforeAll(async () => {
  server = await startOpenAiServer({ models: [{ id: "fake-7b", object: "model" }] });
  backup = await startOpenAiServer();
  port = new URL(server.url).port;
  dataDir = tempDataDir();
  writeFileSync(
    join(dataDir, "llm_router.yaml"),
    `providers:
  lowbit_server:
    base_url: ${server.url}/v1
    api_key_ref: LOWBIT_KEY
  cloud_a:
    base_url: ${backup.url}/v1
    api_key_ref: CLOUD_A_KEY
task_types:
  conversation:
    primary: {provider: lowbit_server, model: fake-7b}
  creative_writing:
    primary: {provider: lowbit_server, model: fake-7b}
    fallback:
      - {provider: cloud_a, model: backup-model}
`,
  );
  daemon = await startScriptedDaemon(dataDir, { LOWBIT_KEY: KEY, CLOUD_A_KEY: `${KEY}-cloud` });
});
afterAll(async () => {
  await daemon?.stop();
  await server?.close().catch(() => {});
  await backup?.close();
});

const chat = (...args: string[]) => runCli(["chat", ...args], { env: { ASSISTANT_DATA_DIR: dataDir } });

describe("assistant chat when the configured model server stops", () => {
  it("while the server runs, the answer comes from it with no notice and exit 0", async () => {
    server.enqueue({ kind: "reply", text: "hello from fake-7b" });
    const res = await chat("--task-type", "conversation", "hello");
    expect(res.code).toBe(0);
    expect(res.stdout).toBe("hello from fake-7b\n");
    expect(res.stderr).toBe("");
  });

  it("a one-shot question names the failed server on stderr, the core's answer names it too, and exits 1", async () => {
    await server.close();
    const res = await chat("--task-type", "conversation", "hello");
    expect(res.code).toBe(1);
    const reason = `cannot connect to 127.0.0.1:${port} (ECONNREFUSED: nothing listens there)`;
    expect(res.stderr).toBe(
      `error: no model answered: lowbit_server/fake-7b failed: ${reason}; answered by assistant_core\n`,
    );
    // The answer itself (the built-in core) says what failed and what to do, not how to configure a server.
    expect(res.stdout).toContain(
      `lowbit_server/fake-7b failed: ${reason}; start that server or run \`assistant discover\`.`,
    );
    expect(res.stdout).not.toContain("To get a model");
    for (const text of [res.stdout, res.stderr]) expect(text).not.toContain(KEY);
  });

  it("--json carries the fallbacks next to the reply, stdout stays JSON, and the exit code is 1", async () => {
    const res = await chat("--json", "--task-type", "conversation", "hello");
    expect(res.code).toBe(1);
    const reply = res.json();
    expect(reply).toMatchObject({ provider: "assistant_core", status: "completed" });
    expect(reply.fallbacks).toEqual([
      {
        provider: "lowbit_server",
        model: "fake-7b",
        reason: `cannot connect to 127.0.0.1:${port} (ECONNREFUSED: nothing listens there)`,
      },
    ]);
    expect(res.stderr).toContain("error: no model answered: lowbit_server/fake-7b failed:");
    expect(res.stdout + res.stderr).not.toContain(KEY);
  });

  it("when a fallback model answers, the notice names the failure and who answered, and the exit code is 0", async () => {
    backup.enqueue({ kind: "reply", text: "a poem from the backup" });
    const res = await chat("--task-type", "creative_writing", "write a poem");
    expect(res.code).toBe(0);
    expect(res.stdout).toBe("a poem from the backup\n");
    expect(res.stderr).toBe(
      `lowbit_server/fake-7b failed: cannot connect to 127.0.0.1:${port} (ECONNREFUSED: nothing listens there); answered by cloud_a/backup-model\n`,
    );
    expect(JSON.stringify(backup.requests.map((r) => r.body))).not.toContain(KEY);
  });

  it("doctor, run by the CLI and by the daemon, names the stopped server and says the conversation route cannot answer", async () => {
    for (const args of [
      ["doctor", "--json"],
      ["doctor", "--advice", "--json"],
    ]) {
      const res = await runCli(args, { env: { ASSISTANT_DATA_DIR: dataDir, LOWBIT_KEY: KEY } });
      const checks = res.json().checks as Array<{ id: string; status: string; detail: string; fix?: string }>;
      expect(checks.find((c) => c.id === "router.provider.lowbit_server")).toMatchObject({
        status: "warn",
        detail: expect.stringContaining(`cannot reach http://127.0.0.1:${port}/v1/models (ECONNREFUSED)`),
        fix: expect.stringContaining("`assistant discover`"),
      });
      expect(checks.find((c) => c.id === "router.conversation")).toMatchObject({
        status: "warn",
        detail: expect.stringMatching(/^no model can answer a conversation \(lowbit_server\/fake-7b\)/),
      });
      expect(res.stdout).not.toContain(KEY);
    }
  });

  it("an interactive chat prints the notice after the answer and goes on", async () => {
    backup.enqueue({ kind: "reply", text: "first" }, { kind: "reply", text: "second" });
    const res = await runCli(["chat", "--task-type", "creative_writing"], {
      env: { ASSISTANT_DATA_DIR: dataDir },
      input: "one\ntwo\n",
    });
    expect(res.code).toBe(0);
    expect(res.stdout).toContain("first\n");
    expect(res.stdout).toContain("second\n");
    expect(res.stderr.match(/lowbit_server\/fake-7b failed: .*; answered by cloud_a\/backup-model/g)).toHaveLength(2);
  });
});
