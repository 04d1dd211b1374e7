import { describe, expect, it } from "vitest";
import { answerLoadTools, LOAD_TOOLS } from "../../src/agent/loadTools.ts";
import { PROMPT_BUDGET_TOKENS, systemPrompt } from "../../src/agent/prompt.ts";
import { namedTools } from "../../src/agent/toolMatch.ts";
import { CORE_TOOLS, offeredTools, unitPrompt } from "../../src/agent/toolOffer.ts";
import { agentProfileSchema } from "../../src/config/schemas/agentProfile.ts";
import { estimateTokens } from "../../src/llm/prices.ts";
import { toolHarness } from "../tools/harness.ts";
import { asRegistryTools, FIXTURE_TOOL_COUNT } from "./fixtures/manyTools.ts";

// The prompt stays small whatever the number of installed tools: 8 built-ins plus 42 plugin/MCP-like tools with
// real schemas, registered in the registry the daemon builds (createToolServices), offered through the same
// function the task service uses (unitPrompt). End to end on a real daemon: toolIndex.test.ts.

const PERMISSIVE = {
  allowed_read_paths: ["/tmp"],
  allowed_write_paths: ["/tmp"],
  allowed_commands: ["ls"],
  unsandboxed_commands_acknowledged: true,
  allowed_web_domains: ["*"],
  web_search_enabled: true,
};

function fiftyTools(policy: Record<string, unknown> = PERMISSIVE) {
  const h = toolHarness({ policy });
  h.tools.registry.addProvider(() => asRegistryTools());
  return { h, tools: offeredTools(h.tools) };
}

const base = systemPrompt(agentProfileSchema.parse({}));
const size = (p: ReturnType<typeof unitPrompt>) =>
  estimateTokens(p.system) + estimateTokens(JSON.stringify(p.offer.defs));
const sent = (p: ReturnType<typeof unitPrompt>) => p.offer.defs.map((d) => d.name);

const MESSAGES = [
  "Hello, how are you today?",
  "When is my dentist appointment? Check my notes in /tmp/notes.",
  "What's the weather going to be like tomorrow in Lyon?",
  "Turn off the kitchen light and tell me the living room temperature.",
  "Open example.com in the browser and take a screenshot of the page.",
  "Create a GitHub issue in acme/app about the login bug and post it to the team channel on Slack.",
  "Summarise the unread emails from Anna and draft a reply.",
];

describe("the tools offered to the model", () => {
  it("keeps the system prompt plus tool definitions under 1,500 tokens with 50 registered tools", () => {
    const { tools } = fiftyTools();
    expect(tools).toHaveLength(8 + FIXTURE_TOOL_COUNT);
    expect(tools).toHaveLength(50);
    for (const message of MESSAGES) {
      const prompt = unitPrompt({ base, message, tools });
      expect(size(prompt), message).toBeLessThan(PROMPT_BUDGET_TOKENS);
      // Every offered tool is reachable: by its schema or by name in the index.
      for (const tool of tools) {
        expect(sent(prompt).includes(tool.name) || prompt.system.includes(tool.name.split("__").at(-1)!)).toBe(true);
      }
    }
  });

  it("stays under the budget with a full memory block; a larger one moves core schemas into the index", () => {
    const { tools } = fiftyTools();
    const memories = (lines: number) =>
      `What you remember:\n${"- (fact) the user likes long walks by the sea in winter\n".repeat(lines)}`;
    // ASSISTANT_MEMORY_PROMPT_TOKENS is 400 by default: the core schemas still fit.
    const full = unitPrompt({ base, message: "Hello!", tools, remembered: memories(28) });
    expect(estimateTokens(memories(28))).toBeGreaterThan(380);
    expect(size(full)).toBeLessThan(PROMPT_BUDGET_TOKENS);
    expect(sent(full)).toEqual([...CORE_TOOLS, LOAD_TOOLS]);
    const larger = unitPrompt({ base, message: "Hello!", tools, remembered: memories(45) });
    expect(size(larger)).toBeLessThan(PROMPT_BUDGET_TOKENS);
    expect(sent(larger)).not.toContain("search");
    expect(larger.system).toMatch(/^- .*\bsearch\b/m);
  });

  it("sends the plain core tools, load_tools and an index for a plain message", () => {
    const { tools } = fiftyTools();
    const prompt = unitPrompt({ base, message: "Hello, how are you today?", tools });
    expect(sent(prompt)).toEqual([...CORE_TOOLS, LOAD_TOOLS]);
    expect(prompt.system).toContain("More tools (call load_tools");
    expect(prompt.system).toContain("untrusted_data");
    expect(prompt.system).toContain("TOOL: <name>");
    // The stable part of the prompt does not depend on the message (prompt caches keep their prefix).
    const other = unitPrompt({ base, message: "Turn off the kitchen light", tools });
    expect(other.system).toBe(prompt.system);
    expect(sent(other).slice(0, 4)).toEqual(sent(prompt));
  });

  it("always sends the full schema of a tool the message names, by name or by its purpose", () => {
    const { tools } = fiftyTools();
    const cases: Array<[string, string]> = [
      ["Use github__create_issue to file the bug", "github__create_issue"],
      ["please create an issue for the crash in acme/app", "github__create_issue"],
      ["post a message on slack: lunch is ready", "slack__post_message"],
      ["run the command `ls /tmp`", "run_command"],
      ["do a web search for the opening hours of the museum", "web_search"],
      ["write the file /tmp/todo.txt with 'buy milk'", "write_file"],
      ["take a screenshot with browser_take_screenshot", "browser__browser_take_screenshot"],
      ["what's the state of sensor.kitchen? use get_state", "home__get_state"],
    ];
    for (const [message, tool] of cases) {
      const prompt = unitPrompt({ base, message, tools });
      expect(sent(prompt), message).toContain(tool);
      const definition = prompt.offer.defs.find((d) => d.name === tool)!;
      expect(JSON.stringify(definition.inputSchema)).toBe(
        JSON.stringify(stripSchemaKey(tools.find((t) => t.name === tool)!.parameters)),
      );
    }
    // Even a message naming many tools gets them all.
    const greedy = [
      "github__create_issue github__list_issues github__get_issue github__add_issue_comment",
      "github__create_pull_request calendar__create_event email__send_email browser__browser_type",
    ].join(" ");
    const prompt = unitPrompt({ base, message: greedy, tools });
    for (const name of greedy.split(" ")) expect(sent(prompt)).toContain(name);
  });

  it("adds the most relevant tools' schemas for a message that needs them", () => {
    const { tools } = fiftyTools();
    const prompt = unitPrompt({ base, message: "What's the weather forecast for Lyon?", tools });
    expect(sent(prompt)).toContain("weather__get_forecast");
    expect(sent(prompt)).not.toContain("github__create_issue");
  });

  it("counts the tools of a plugin whose routing rule matched as relevant", () => {
    const { tools } = fiftyTools();
    const message = "Do I need an umbrella today?";
    expect(sent(unitPrompt({ base, message, tools }))).not.toContain("weather__get_forecast");
    expect(sent(unitPrompt({ base, message, tools, plugin: "weather" }))).toContain("weather__get_forecast");
  });

  it("never offers a tool the policy denies, neither in schemas nor in the index nor to TOOL: lines", () => {
    const { tools } = fiftyTools({
      ...PERMISSIVE,
      tool_profiles: { reader: ["read_file", "list_dir", "search", "weather__get_forecast", "run_command"] },
      default_profile: "reader",
    });
    expect(tools.map((t) => t.name)).toEqual([
      "read_file",
      "list_dir",
      "search",
      "run_command",
      "weather__get_forecast",
    ]);
    const prompt = unitPrompt({ base, message: "use write_file and github__create_issue, then run ls", tools });
    const everything = `${prompt.system}\n${JSON.stringify(prompt.offer.defs)}`;
    expect(everything).not.toContain("write_file");
    expect(everything).not.toContain("create_issue");
    expect(prompt.textTools.map((t) => t.name)).not.toContain("write_file");
    expect(prompt.offer.offered.has("github__create_issue")).toBe(false);
  });

  it("sends every schema and no index when they are few", () => {
    const h = toolHarness({ policy: { allowed_read_paths: ["/tmp"] } });
    const tools = offeredTools(h.tools);
    const names = tools.map((t) => t.name);
    const prompt = unitPrompt({ base, message: "hi", tools });
    expect(sent(prompt)).toEqual(names);
    expect(prompt.system).not.toContain("More tools");
    expect(prompt.textTools.map((t) => t.name)).not.toContain(LOAD_TOOLS);
  });

  it("pins the tools named by the profile's rules", () => {
    const { tools } = fiftyTools();
    const withRule = systemPrompt(agentProfileSchema.parse({ rules: ["Check weather__get_alerts before trips"] }));
    const prompt = unitPrompt({ base: withRule, message: "Hello", tools });
    expect(sent(prompt)).toContain("weather__get_alerts");
  });

  it("load_tools answers schemas by name or by words, and says what exists otherwise", () => {
    const { tools } = fiftyTools();
    const offered = new Map(tools.map((t) => [t.name, t]));
    const byName = answerLoadTools({ names: "calendar__create_event, slack__post_message" }, offered);
    expect(byName.found.map((t) => t.name)).toEqual(["calendar__create_event", "slack__post_message"]);
    expect(byName.output).toContain('"required":["summary","start","end"]');
    const byWords = answerLoadTools({ names: "thermostat temperature" }, offered);
    expect(byWords.found.map((t) => t.name)).toContain("home__set_temperature");
    const none = answerLoadTools({ names: "teleport" }, offered);
    expect(none.found).toEqual([]);
    expect(none.output).toMatch(/No offered tool matches "teleport"\. Tools: read_file, /);
    expect(answerLoadTools({}, offered).output).toContain('load_tools needs {"names"');
  });

  it("does not take ordinary words for tool names", () => {
    const { tools } = fiftyTools();
    expect(namedTools(tools, "Hello, how are you today? Tell me a joke.").map((t) => t.name)).toEqual([]);
  });
});

function stripSchemaKey(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = schema;
  return rest;
}
