import { describe, expect, it } from "vitest";
import { loadRules, matchRules, routingRulesSchema, wildcardMatch } from "../../src/plugins/routingRules.ts";

// Routing rules: keywords match whole words (phrases as phrases), wildcard patterns match the whole message in
// linear time (a hostile pattern cannot stall the daemon), and the highest priority wins, then declaration order.

const rules = (declared: unknown[], id = "p") =>
  loadRules(routingRulesSchema.parse(declared), { kind: "plugin", id }, null);

describe("routing rules", () => {
  it("matches keywords as whole words and phrases, case-insensitively", () => {
    const set = rules([{ keywords: ["invoice", "tax return"], task_type: "data_analysis" }]);
    expect(matchRules(set, "Please file this INVOICE.")).toMatchObject({ matched_on: "keyword: invoice" });
    expect(matchRules(set, "my tax return is due")).toMatchObject({ matched_on: "keyword: tax return" });
    expect(matchRules(set, "invoices are boring")).toBeNull();
  });

  it("matches wildcard patterns against the whole message", () => {
    expect(wildcardMatch("*refund*", "i want a refund now")).toBe(true);
    expect(wildcardMatch("deploy ?", "deploy x")).toBe(true);
    expect(wildcardMatch("deploy ?", "deploy xy")).toBe(false);
    expect(wildcardMatch("a*b*c", "aXXbYYc")).toBe(true);
    const started = performance.now();
    expect(wildcardMatch(`${"*a".repeat(100)}b`, "a".repeat(20_000))).toBe(false);
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it("prefers the highest priority, then the first declared", () => {
    const set = [
      ...rules([{ keywords: ["report"], agent: "code" }], "first"),
      ...rules([{ keywords: ["report"], task_type: "creative_writing" }], "second"),
      ...rules([{ pattern: "*quarterly*", task_type: "data_analysis", priority: 10 }], "third"),
    ];
    expect(matchRules(set, "the report")!.rule.source.id).toBe("first");
    expect(matchRules(set, "the quarterly report")!.rule.target).toEqual({ kind: "task_type", name: "data_analysis" });
  });

  it("refuses rules without a trigger, with two targets or with a bad name", () => {
    expect(routingRulesSchema.safeParse([{ task_type: "code" }]).success).toBe(false);
    expect(routingRulesSchema.safeParse([{ keywords: ["a"], task_type: "code", skill: "x" }]).success).toBe(false);
    expect(routingRulesSchema.safeParse([{ keywords: ["a"], task_type: "no spaces" }]).success).toBe(false);
    expect(() => rules([{ keywords: ["a"] }])).toThrow("names no task_type, agent or skill");
  });
});
