import { describe, expect, it } from "vitest";
import { llmRouterSchema } from "../../../src/config/schemas/llmRouter.ts";
import { CHAT_CATEGORIES, classifyMessage } from "../../../src/llm/classify.ts";
import { resolutionChain, resolveRoute } from "../../../src/llm/routing.ts";

describe("keyword classification", () => {
  it.each([
    ["Can you refactor this TypeScript function to remove the bug?", "code_generation"],
    ["Écris une fonction Python qui trie une liste", "code_generation"],
    ["Write a short poem about the sea", "creative_writing"],
    ["Raconte-moi une histoire avec un personnage de roman", "creative_writing"],
    ["Explain the quantum physics hypothesis behind this experiment", "scientific_analysis"],
    ["Compute the average and median of this CSV dataset and plot a chart", "data_analysis"],
    ["The daemon crashed with a timeout error, check the logs and disk", "system_diagnostic"],
    ["Mon serveur ne fonctionne pas, erreur réseau", "system_diagnostic"],
    ["Hi! How are you today?", "conversation"],
    ["", "conversation"],
  ])("%s -> %s", (message, category) => {
    expect(classifyMessage(message).category).toBe(category);
  });

  it("always answers exactly one of the six categories, even for hostile input", () => {
    for (const message of ["(".repeat(50_000), "\u0000\u202e", "🙂".repeat(1000), "log api graph"]) {
      expect(CHAT_CATEGORIES).toContain(classifyMessage(message).category);
    }
    expect(classifyMessage("log").category).toBe("conversation"); // one weak word is not enough
  });

  it("matches whole words only", () => {
    expect(classifyMessage("the barcode scanner").matched).not.toContain("code_generation:code");
  });
});

describe("task type resolution", () => {
  const config = (task_types: Record<string, unknown>, global: Record<string, unknown> = {}) =>
    llmRouterSchema.parse({ global, task_types });
  const local = { provider: "local_server", model: "m-local" };
  const cloud = { provider: "cloud_a", model: "m-cloud" };

  it("uses the embedded model then core when the file has no routes", () => {
    const route = resolveRoute(config({}), "conversation", { degraded: false });
    expect(route.source).toBe("default");
    expect(route.targets).toEqual([
      { provider: "assistant_embedded", model: "default" },
      { provider: "assistant_core", model: "core" },
    ]);
  });

  it("resolves aliases, orchestrator -> system, specialists and unknown names", () => {
    expect(resolutionChain("code")).toEqual(["code_generation", "conversation"]);
    expect(resolutionChain("search")).toEqual(["conversation"]);
    expect(resolutionChain("schedule")).toEqual(["conversation"]);
    expect(resolutionChain("orchestrator")).toEqual(["orchestrator", "system", "conversation"]);
    expect(resolutionChain("security_audit")).toEqual([
      "security_audit",
      "code_generation",
      "system_diagnostic",
      "conversation",
    ]);
    expect(resolutionChain("qa")).toEqual(["qa", "system_diagnostic", "code_generation", "conversation"]);
    expect(resolutionChain("database")).toEqual(["database", "data_analysis", "code_generation", "conversation"]);
    expect(resolutionChain("research")).toEqual(["research", "scientific_analysis", "conversation"]);
    expect(resolutionChain("anything-else")).toEqual(["anything-else", "conversation"]);
    const file = config({ system: { primary: local }, code_generation: { primary: cloud } });
    expect(resolveRoute(file, "orchestrator", { degraded: false }).source).toBe("system");
    expect(resolveRoute(file, "code", { degraded: false }).source).toBe("code_generation");
    expect(resolveRoute(file, "architect", { degraded: false }).source).toBe("code_generation");
    expect(resolveRoute(file, "nobody-knows", { degraded: false }).source).toBe("default");
  });

  it("image_generation never falls back to a chat model", () => {
    expect(
      resolveRoute(config({ conversation: { primary: cloud } }), "image_generation", { degraded: false }).targets,
    ).toEqual([]);
    const withImage = config({
      image_generation: { primary: { provider: "cloud_a", model: "img", config: { default_size: "512x512" } } },
    });
    expect(resolveRoute(withImage, "image_generation", { degraded: false }).targets.map((t) => t.model)).toEqual([
      "img",
    ]);
  });

  it("enable_fallback: false keeps only the primary; degraded mode drops cloud providers", () => {
    const file = config({ conversation: { primary: cloud, fallback: [local] } }, { enable_fallback: false });
    expect(resolveRoute(file, "conversation", { degraded: false }).targets).toEqual([cloud]);
    const both = config({ conversation: { primary: cloud, fallback: [local] } });
    const degraded = resolveRoute(both, "conversation", { degraded: true });
    expect(degraded.targets.map((t) => t.provider)).toEqual(["local_server", "assistant_core"]);
    expect(degraded.dropped).toEqual([cloud]);
  });
});
