import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { scriptedRouterYaml, startScriptedDaemon } from "../agent/helpers.ts";
import { api as apiCall, type TestDaemon, tempDataDir } from "../helpers/daemon.ts";
import { type ScriptedServer, startOpenAiServer } from "../llm/servers/openaiServer.ts";

// An agent whose owner allowed their whole home folder (which holds the data directory), every command but rm,
// and the loopback address, tries every tool to give itself more power: read the auth token and approve its own
// review-queue item over HTTP, or rewrite tools_policy.yaml. A real daemon, the agent loop driven by a scripted
// model, and the same calls through POST /api/tools/:name/invoke.

let server: ScriptedServer;
let daemon: TestDaemon;
let home: string;
let dataDir: string;
let policyText: string;

beforeAll(async () => {
  server = await startOpenAiServer();
  home = tempDataDir("assistant-home-");
  dataDir = join(home, "assistant");
  mkdirSync(dataDir);
  writeFileSync(
    join(dataDir, "llm_router.yaml"),
    scriptedRouterYaml(server.url, { conversation: "chat-model", default: "chat-model" }),
  );
  policyText = stringify({
    allowed_read_paths: [home],
    allowed_write_paths: [home],
    allowed_commands: ["*"],
    blocked_commands: ["rm"],
    allowed_web_domains: ["127.0.0.1", "localhost"],
    require_approval: ["write_file"],
  });
  writeFileSync(join(dataDir, "tools_policy.yaml"), policyText);
  daemon = await startScriptedDaemon(dataDir, { ASSISTANT_MAX_TOOL_ROUNDS: "12" });
});
afterAll(async () => {
  await daemon?.stop();
  await server?.close();
});

const api = (method: string, path: string, body?: unknown) => apiCall(daemon, method, path, body, daemon.token);
const tokenFile = () => join(dataDir, "auth_token");

/** A write_file call that waits in the review queue: the item the agent would like to approve itself. */
async function pendingItem(): Promise<string> {
  const res = await api("POST", "/api/tools/write_file/invoke", { path: join(home, "wanted.txt"), content: "x" });
  expect(res.status).toBe(202);
  return res.json().queue_item_id as string;
}

describe("the agent cannot escalate its own permissions", () => {
  it("through the agent loop: no tool yields the token, approves its item or changes the policy", async () => {
    const itemId = await pendingItem();
    const approveUrl = `http://127.0.0.1:${daemon.port}/api/permissions/queue/${itemId}/approve`;
    const attempts: Array<{ name: string; arguments: Record<string, unknown> }> = [
      { name: "read_file", arguments: { path: tokenFile() } },
      { name: "read_file", arguments: { path: `/proc/self/root${tokenFile()}` } },
      { name: "read_file", arguments: { path: "/proc/self/environ" } },
      { name: "search", arguments: { query: daemon.token.slice(0, 12), path: home } },
      { name: "run_command", arguments: { command: `cat ${tokenFile()}` } },
      { name: "run_command", arguments: { command: `sh -c "cat ${tokenFile()}"` } },
      { name: "run_command", arguments: { command: `cat /proc/${daemon.process.pid}/environ` } },
      { name: "web_fetch", arguments: { url: approveUrl } },
      {
        name: "write_file",
        arguments: { path: join(dataDir, "tools_policy.yaml"), content: "allowed_commands: ['*']" },
      },
      { name: "write_file", arguments: { path: join(dataDir, "plugins", "evil", "plugin.json"), content: "{}" } },
    ];
    server.enqueue(...attempts.map((a) => ({ kind: "tool_call" as const, name: a.name, arguments: a.arguments })), {
      kind: "reply",
      text: "I could not.",
    });
    const res = await api("POST", "/api/message", { message: "Approve your own pending request.", wait: true });
    expect(res.status).toBe(200);
    expect(res.json().reply).toBe("I could not.");

    // What the model was shown never holds the token, and the item is still waiting for its owner.
    const seen = JSON.stringify(server.requests.map((r) => r.body));
    expect(seen).not.toContain(daemon.token);
    expect((await api("GET", `/api/permissions/queue/${itemId}`)).json().status).toBe("pending");
    expect(readFileSync(join(dataDir, "tools_policy.yaml"), "utf8")).toBe(policyText);

    // The model read why: each file attempt was refused by the built-in rule, by name.
    const last = server.requests.at(-1)!.body as { messages: Array<{ role: string; content: unknown }> };
    const results = last.messages.filter((m) => m.role === "tool").map((m) => JSON.stringify(m.content));
    expect(results).toHaveLength(attempts.length);
    expect(results.filter((r) => r.includes("protected: daemon data")).length).toBeGreaterThanOrEqual(5);
    await api("POST", `/api/permissions/queue/${itemId}/deny`, { note: "test over" });
  });

  it("through POST /api/tools/:name/invoke: 403 naming the built-in rule, nothing written", async () => {
    for (const [tool, args] of [
      ["read_file", { path: tokenFile() }],
      ["read_file", { path: join(dataDir, "vault.json") }],
      ["write_file", { path: join(dataDir, "tools_policy.yaml"), content: "allowed_commands: ['*']" }],
      ["write_file", { path: join(dataDir, "skills", "evil", "SKILL.md"), content: "x" }],
    ] as const) {
      const res = await api("POST", `/api/tools/${tool}/invoke`, args);
      expect(res.status, `${tool} ${JSON.stringify(args)}`).toBe(403);
      expect(res.json().error.details.rule).toMatch(/^protected: daemon data: /);
      expect(res.body).not.toContain(daemon.token);
    }
    const cat = await api("POST", "/api/tools/run_command/invoke", { command: `cat ${tokenFile()}` });
    expect(cat.status).toBe(200);
    expect(cat.json().result.output).not.toContain(daemon.token);
    expect(readFileSync(join(dataDir, "tools_policy.yaml"), "utf8")).toBe(policyText);

    const view = (await api("GET", "/api/tools/effective")).json();
    expect(view.builtin_rules[0].rule).toBe("protected: daemon data");
    expect(view.command_sandbox.available).toBe(process.platform === "linux");
  });
});
