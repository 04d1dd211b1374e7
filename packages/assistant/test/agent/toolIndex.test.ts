import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { PROMPT_BUDGET_TOKENS } from "../../src/agent/prompt.ts";
import { estimateTokens } from "../../src/llm/prices.ts";
import { api as apiCall, type TestDaemon, tempDataDir, until } from "../helpers/daemon.ts";
import { type ScriptedServer, startOpenAiServer } from "../llm/servers/openaiServer.ts";
import { buildTestPlugin } from "../plugins/buildFixtures.ts";
import { asPluginManifests } from "./fixtures/manyTools.ts";
import { scriptedRouterYaml, startScriptedDaemon } from "./helpers.ts";

// The tool index on a real daemon with 50 tools: the 13 built-in ones (files, commands, web, message, skills,
// memory) and 37 from 8 installed WASM plugins shaped like MCP servers (GitHub, Slack, calendar, browser, home hub,
// Notion, weather, e-mail; every tool runs the echo test plugin, which answers its input). A scripted
// OpenAI-protocol model records what the daemon sends and calls tools that were only in the index.

const SERVERS = ["github", "slack", "calendar", "browser", "home", "notion", "weather", "email"];
const POLICY = {
  allowed_read_paths: ["/tmp"],
  allowed_write_paths: ["/tmp"],
  allowed_commands: ["ls"],
  unsandboxed_commands_acknowledged: true,
  allowed_web_domains: ["*"],
  web_search_enabled: true,
  require_approval: [],
};

let server: ScriptedServer;
let daemon: TestDaemon;

beforeAll(async () => {
  server = await startOpenAiServer();
  const dataDir = tempDataDir();
  writeFileSync(join(dataDir, "llm_router.yaml"), scriptedRouterYaml(server.url, { conversation: "m", default: "m" }));
  writeFileSync(join(dataDir, "tools_policy.yaml"), stringify(POLICY));
  const wasm = await buildTestPlugin("echo");
  for (const [id, manifest] of Object.entries(asPluginManifests(SERVERS))) {
    mkdirSync(join(dataDir, "plugins", id), { recursive: true });
    writeFileSync(join(dataDir, "plugins", id, "plugin.wasm"), wasm);
    writeFileSync(join(dataDir, "plugins", id, "plugin.json"), JSON.stringify(manifest));
  }
  daemon = await startScriptedDaemon(dataDir);
});
afterAll(async () => {
  await daemon?.stop();
  await server?.close();
});

const api = (method: string, path: string, body?: unknown) => apiCall(daemon, method, path, body, daemon.token);

interface WireTool {
  type: string;
  function: { name: string; description: string; parameters: Record<string, unknown> };
}
interface ChatBody {
  messages: Array<{ role: string; content: unknown }>;
  tools?: WireTool[];
}
const chatBodies = () =>
  server.requests.filter((r) => r.path.endsWith("/chat/completions")).map((r) => r.body as ChatBody);
const systemOf = (body: ChatBody) =>
  body.messages
    .filter((m) => m.role === "system")
    .map((m) => m.content as string)
    .join("\n");
const toolNames = (body: ChatBody) => (body.tools ?? []).map((t) => t.function.name);
/** What the request costs before the conversation: the system messages and the tool definitions, as sent. */
const promptTokens = (body: ChatBody) =>
  estimateTokens(systemOf(body)) + estimateTokens(JSON.stringify(body.tools ?? []));

/** Sends a message with scripted model turns; returns the requests the daemon made for it and the task. */
async function exchange(message: string, ...turns: Parameters<ScriptedServer["enqueue"]>) {
  const before = chatBodies().length;
  server.enqueue(...turns);
  const res = await api("POST", "/api/message", { message, wait: true });
  expect(res.status).toBe(200);
  return { task: res.json(), bodies: chatBodies().slice(before) };
}

const toolMessages = (body: ChatBody) => JSON.stringify(body.messages.filter((m) => m.role === "tool"));

describe("the tool index on a daemon with 50 tools", () => {
  it("has 50 tools and sends under 1,500 tokens of system prompt and tools for each kind of message", async () => {
    const effective = (await api("GET", "/api/tools/effective")).json();
    const usable = effective.tools.filter((t: { status: string }) => t.status !== "blocked");
    expect(usable).toHaveLength(50);
    for (const message of [
      "Hello, how are you?",
      "What is on my calendar tomorrow, and will it rain?",
      "Use github__create_issue to report that the login page is broken",
    ]) {
      const { bodies } = await exchange(message, { kind: "reply", text: "Done." });
      expect(promptTokens(bodies[0]!), message).toBeLessThan(PROMPT_BUDGET_TOKENS);
      // Every usable tool is listed: by its schema or in the index.
      const system = systemOf(bodies[0]!);
      for (const tool of usable) {
        const own = tool.name.split("__").at(-1);
        expect(toolNames(bodies[0]!).includes(tool.name) || system.includes(own)).toBe(true);
      }
    }
  });

  it("sends the full schema of a tool the person asks for, by name or by its purpose", async () => {
    const named = await exchange("Use github__create_issue to report the crash", { kind: "reply", text: "ok" });
    const sent = named.bodies[0]!.tools!.find((t) => t.function.name === "github__create_issue")!;
    expect(sent.function.parameters).toMatchObject({ required: ["owner", "repo", "title"] });
    const purpose = await exchange("Post a message to the #general channel on Slack", { kind: "reply", text: "ok" });
    expect(toolNames(purpose.bodies[0]!)).toContain("slack__post_message");
    const plain = await exchange("Hello!", { kind: "reply", text: "Hi" });
    expect(toolNames(plain.bodies[0]!)).not.toContain("slack__post_message");
    // The weather plugin's routing rule matches "umbrella": its tools are the likeliest.
    const routed = await exchange("Do I need an umbrella today?", { kind: "reply", text: "No." });
    expect(toolNames(routed.bodies[0]!)).toContain("weather__get_forecast");
  });

  it("runs a tool the model calls from the index, and sends its schema from the next round", async () => {
    const args = { time_min: "2030-01-01T00:00:00Z", time_max: "2030-01-02T00:00:00Z" };
    const { task, bodies } = await exchange(
      "Anything planned for new year's day 2030?",
      { kind: "tool_call", name: "calendar__list_events", arguments: args },
      { kind: "reply", text: "Nothing planned." },
    );
    expect(task).toMatchObject({ status: "completed", reply: "Nothing planned." });
    expect(toolNames(bodies[0]!)).not.toContain("calendar__list_events");
    expect(systemOf(bodies[0]!)).toContain("list_events");
    expect(toolMessages(bodies[1]!)).toContain("2030-01-02T00:00:00Z"); // the plugin echoed its input
    expect(toolNames(bodies[1]!)).toContain("calendar__list_events");
  });

  it("answers load_tools with the schemas, then the loaded tool runs", async () => {
    const { task, bodies } = await exchange(
      "Tell the team it is lunch time",
      { kind: "tool_call", name: "load_tools", arguments: { names: "slack__post_message" } },
      { kind: "tool_call", name: "slack__post_message", arguments: { channel_id: "C42", text: "Lunch!" } },
      { kind: "reply", text: "Posted." },
    );
    expect(task).toMatchObject({ status: "completed", reply: "Posted." });
    expect(toolNames(bodies[0]!)).toContain("load_tools");
    expect(toolMessages(bodies[1]!)).toContain('\\"required\\":[\\"channel_id\\",\\"text\\"]');
    expect(toolNames(bodies[1]!)).toContain("slack__post_message");
    expect(toolMessages(bodies[2]!)).toContain("Lunch!");
  });

  it("answers a wrong call of an index tool with its schema, so the model can retry", async () => {
    const { bodies } = await exchange(
      "Book the dentist",
      { kind: "tool_call", name: "calendar__create_event", arguments: { title: "Dentist" } },
      {
        kind: "tool_call",
        name: "calendar__create_event",
        arguments: { summary: "Dentist", start: "2030-01-03T09:00:00Z", end: "2030-01-03T10:00:00Z" },
      },
      { kind: "reply", text: "Booked." },
    );
    const answer = toolMessages(bodies[1]!);
    expect(answer).toContain("Invalid arguments for calendar__create_event");
    expect(answer).toContain("Parameters of calendar__create_event");
    expect(answer).toContain('\\"required\\":[\\"summary\\",\\"start\\",\\"end\\"]');
    expect(toolMessages(bodies[2]!)).toContain("2030-01-03T09:00:00Z");
  });

  it("runs an index tool called in the TOOL: text form", async () => {
    const { task, bodies } = await exchange(
      "Any storm warnings in California?",
      { kind: "reply", text: "TOOL: weather__get_alerts CA" },
      { kind: "reply", text: "No alerts." },
    );
    expect(task).toMatchObject({ status: "completed", reply: "No alerts." });
    expect(JSON.stringify(bodies[1]!.messages)).toContain("Result of TOOL: weather__get_alerts");
    expect(JSON.stringify(bodies[1]!.messages)).toContain('\\"area\\":\\"CA\\"');
  });

  it("never offers a tool the policy denies, even when the message names it", async () => {
    writeFileSync(
      join(daemon.dataDir, "tools_policy.yaml"),
      stringify({
        ...POLICY,
        tool_profiles: { reader: ["read_file", "weather__get_forecast"] },
        default_profile: "reader",
      }),
    );
    await until(
      () => api("GET", "/api/tools/effective").then((r) => r.json()),
      (v) => v.default_profile === "reader",
    );
    const { bodies } = await exchange("Use github__create_issue and write_file", { kind: "reply", text: "Cannot." });
    const everything = `${systemOf(bodies[0]!)}${JSON.stringify(bodies[0]!.tools)}`;
    expect(toolNames(bodies[0]!)).toEqual(["read_file", "weather__get_forecast"]);
    expect(everything).not.toContain("create_issue");
    expect(everything).not.toContain("write_file");
  });
});
