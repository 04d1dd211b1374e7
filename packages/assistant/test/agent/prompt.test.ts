import { describe, expect, it } from "vitest";
import { buildPrompt, PROMPT_BUDGET_TOKENS, SUMMARY_PREFIX, systemPrompt } from "../../src/agent/prompt.ts";
import { offeredTools, unitPrompt } from "../../src/agent/toolOffer.ts";
import { agentProfileSchema } from "../../src/config/schemas/agentProfile.ts";
import { estimateTokens } from "../../src/llm/prices.ts";
import { toolHarness } from "../tools/harness.ts";

// Small local models have 8k contexts: the default system prompt plus the tools it is given must stay compact.

describe("the agent's prompt", () => {
  it("keeps the system prompt and tools under 1,500 tokens for the default profile, every built-in allowed", () => {
    const h = toolHarness({
      policy: {
        allowed_read_paths: ["/tmp"],
        allowed_write_paths: ["/tmp"],
        allowed_commands: ["ls"],
        unsandboxed_commands_acknowledged: true,
        allowed_web_domains: ["*"],
        web_search_enabled: true,
      },
    });
    const tools = offeredTools(h.tools);
    expect(tools).toHaveLength(8);
    for (const message of ["Hello!", "Run ls in /tmp and read the newest file", "Search the web for llama.cpp"]) {
      const { system, offer } = unitPrompt({ base: systemPrompt(agentProfileSchema.parse({})), message, tools });
      const definitions = JSON.stringify(offer.defs);
      expect(estimateTokens(system) + estimateTokens(definitions)).toBeLessThan(PROMPT_BUDGET_TOKENS);
      expect(definitions).not.toContain("$schema");
    }
    // 50 tools: test/agent/toolOffer.test.ts and, on a real daemon, test/agent/toolIndex.test.ts.
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
