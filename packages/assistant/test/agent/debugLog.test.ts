import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, type TestDaemon, tempDataDir } from "../helpers/daemon.ts";
import { type ScriptedServer, startOpenAiServer } from "../llm/servers/openaiServer.ts";
import { agentDataDir, startScriptedDaemon } from "./helpers.ts";

// ASSISTANT_AGENT_DEBUG=1 through a real daemon: the log gets each model request's size, each tool decision and
// the timings, and none of what was said: not the message, not a tool's arguments, not a vault secret.

const MESSAGE_CANARY = "msg-canary-5b1e0";
const FILE_CANARY = "args-canary-77c2";
const VAULT_CANARY = "vault-canary-c0ffee-91";

let server: ScriptedServer;
let work: string;
let debug: TestDaemon;
let quiet: TestDaemon;

beforeAll(async () => {
  server = await startOpenAiServer();
  work = tempDataDir("assistant-agent-work-");
  writeFileSync(join(work, `${FILE_CANARY}.txt`), "The boat leaves at nine.");
  [debug, quiet] = await Promise.all([
    startScriptedDaemon(agentDataDir(server.url, work), { ASSISTANT_AGENT_DEBUG: "1" }),
    startScriptedDaemon(agentDataDir(server.url, work)),
  ]);
}, 60_000);
afterAll(async () => {
  await Promise.all([debug?.stop(), quiet?.stop()]);
  await server?.close();
});

/** One task: a read the policy allows, a command it denies, then the answer. */
async function runTask(daemon: TestDaemon): Promise<string> {
  expect((await api(daemon, "PUT", "/api/vault", { key: "boat_pin", value: VAULT_CANARY })).status).toBe(200);
  server.enqueue(
    { kind: "tool_call", name: "read_file", arguments: { path: join(work, `${FILE_CANARY}.txt`) } },
    { kind: "tool_call", name: "run_command", arguments: { command: `echo ${VAULT_CANARY}` } },
    { kind: "reply", text: "The boat leaves at nine." },
  );
  const res = await api(daemon, "POST", "/api/message", {
    message: `When does the boat leave? ${MESSAGE_CANARY}`,
    wait: true,
  });
  expect(res.json()).toMatchObject({ status: "completed", reply: "The boat leaves at nine." });
  return res.json().task_id;
}

const log = (daemon: TestDaemon) => readFileSync(join(daemon.dataDir, "logs", "daemon.log"), "utf8");
const fieldsOf = (line: string) => JSON.parse(line.slice(line.indexOf("{")));

describe("ASSISTANT_AGENT_DEBUG=1", () => {
  it("logs request sizes, tool decisions and timings, and never what was said", async () => {
    const taskId = await runTask(debug);
    const lines = log(debug)
      .split("\n")
      .filter((line) => line.includes(" agent: ") && line.includes(taskId));

    const requests = lines.filter((line) => line.includes("INFO  agent: model request"));
    expect(requests).toHaveLength(3); // one per round
    expect(fieldsOf(requests[0]!)).toMatchObject({
      task_id: taskId,
      task_type: "conversation",
      round: 1,
      messages: expect.any(Number),
      chars: expect.any(Number),
      estimated_tokens: expect.any(Number),
      tools: expect.any(Number),
    });
    // The prompt grows with each round's tool results.
    expect(fieldsOf(requests[2]!).chars).toBeGreaterThan(fieldsOf(requests[0]!).chars);

    const answers = lines.filter((line) => line.includes("INFO  agent: model answer")).map(fieldsOf);
    expect(answers).toHaveLength(3);
    expect(answers[0]).toMatchObject({ round: 1, provider: "lowbit_server", model: "chat-model", tool_calls: 1 });
    expect(answers[2]).toMatchObject({ round: 3, tool_calls: 0, chars: "The boat leaves at nine.".length });
    for (const answer of answers) {
      expect(answer.ms).toBeGreaterThanOrEqual(0);
      expect(answer.first_chunk_ms).toBeGreaterThanOrEqual(0);
      expect(answer.first_chunk_ms).toBeLessThanOrEqual(answer.ms);
      expect(answer.tokens_in).toBeGreaterThan(0);
    }

    const tools = lines.filter((line) => line.includes("INFO  agent: tool call")).map(fieldsOf);
    expect(tools).toEqual([
      { task_id: taskId, round: 1, tool: "read_file", status: "ok", ms: expect.any(Number) },
      {
        task_id: taskId,
        round: 2,
        tool: "run_command",
        status: "denied",
        rule: expect.any(String),
        ms: expect.any(Number),
      },
    ]);

    const whole = log(debug);
    for (const canary of [MESSAGE_CANARY, FILE_CANARY, VAULT_CANARY]) expect(whole).not.toContain(canary);
  });

  it("is off by default: no agent lines", async () => {
    await runTask(quiet);
    expect(log(quiet)).not.toContain(" agent: ");
  });
});
