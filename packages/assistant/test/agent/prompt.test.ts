import { describe, expect, it } from "vitest";
import { buildPrompt, SUMMARY_PREFIX, systemPrompt, toolDefinitions } from "../../src/agent/prompt.ts";
import { agentProfileSchema } from "../../src/config/schemas/agentProfile.ts";
import { estimateTokens } from "../../src/llm/prices.ts";
import { toolHarness } from "../tools/harness.ts";

// Small local models have 8k contexts: the default system prompt plus every tool schema must stay compact.

describe("the agent's prompt", () => {
  it("keeps the system prompt and tool schemas under 1,500 tokens for the default profile", () => {
    const h = toolHarness();
    const system = systemPrompt(agentProfileSchema.parse({}));
    const tools = JSON.stringify(toolDefinitions(h.tools.list()));
    const tokens = estimateTokens(system) + estimateTokens(tools);
    expect(tokens).toBeLessThan(1500);
    expect(tools).not.toContain("$schema");
  });

  it("is shaped by agent_profile.json", () => {
    const prompt = systemPrompt(
      agentProfileSchema.parse({
        name: "Jarvis",
        role: "Butler",
        personality: "Dry wit.",
        rules: ["Never book flights"],
        formality: "formal",
      }),
    );
    expect(prompt).toMatch(/^You are Jarvis, butler, running privately/);
    expect(prompt).toContain("Dry wit.");
    expect(prompt).toContain("Rule: Never book flights");
    expect(prompt).toContain("formally");
    expect(prompt).toContain("untrusted_data");
  });

  it("puts the summary before the verbatim history and the new message last", () => {
    const prompt = buildPrompt("sys", "the user likes tea", [], "hello");
    expect(prompt[1]).toEqual({ role: "system", content: `${SUMMARY_PREFIX}\nthe user likes tea` });
    expect(prompt.at(-1)).toEqual({ role: "user", content: [{ type: "text", text: "hello" }] });
  });
});
