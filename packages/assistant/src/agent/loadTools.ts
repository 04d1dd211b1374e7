import type { LanguageModelV4FunctionTool } from "@ai-sdk/provider";
import type { ToolInfo } from "../tools/services.ts";
import { toolDefinition } from "./prompt.ts";
import { keywords, relevance } from "./toolMatch.ts";

// load_tools: how the model gets the full schema of a tool it only saw in the tool index
// (docs/agent.md#how-the-model-sees-tools). It is answered by the agent loop itself: it runs nothing and only
// reads the schemas of tools already offered to this work unit, so it needs no permission. The loaded tools'
// definitions are sent natively from the next round on (grammar-constrained models can only call those).

export const LOAD_TOOLS = "load_tools";
const MAX_FOUND = 5;

export const loadToolsDefinition: LanguageModelV4FunctionTool = {
  type: "function",
  name: LOAD_TOOLS,
  description: "Get the parameters of tools from the tool index, to call them next.",
  inputSchema: {
    type: "object",
    properties: { names: { type: "string", description: "tool names, comma-separated, or words for what you need" } },
    required: ["names"],
    additionalProperties: false,
  },
};

/** What a load_tools call found: the text for the model and the tools whose definitions join the next rounds. */
export interface LoadedTools {
  output: string;
  found: ToolInfo[];
}

export function answerLoadTools(input: unknown, offered: ReadonlyMap<string, ToolInfo>): LoadedTools {
  const names = (input as { names?: unknown } | null)?.names;
  if (typeof names !== "string" || names.trim() === "") {
    return {
      output: `load_tools needs {"names": "tool_a, tool_b"} (names from the tool index, or words). Nothing was loaded.`,
      found: [],
    };
  }
  const asked = names.split(/[\s,]+/).filter((n) => n.length > 0);
  let found = asked.map((n) => offered.get(n)).filter((t): t is ToolInfo => t !== undefined);
  if (found.length === 0) {
    // No exact name: the words say what the model needs; the best-matching tools are given.
    const wanted = keywords(names.replaceAll("_", " "));
    found = [...offered.values()]
      .map((tool) => ({ tool, score: relevance(tool, wanted) }))
      .filter((m) => m.score > 0)
      .sort((a, b) => b.score - a.score)
      .slice(0, MAX_FOUND)
      .map((m) => m.tool);
  }
  if (found.length === 0) {
    return {
      output: `No offered tool matches "${names.slice(0, 200)}". Tools: ${[...offered.keys()].join(", ")}.`,
      found: [],
    };
  }
  const parts = found.map((tool) => {
    const definition = toolDefinition(tool);
    return `${tool.name}: ${tool.description}\nParameters: ${JSON.stringify(definition.inputSchema)}`;
  });
  return { output: `${parts.join("\n\n")}\n\nYou can call ${found.length > 1 ? "them" : "it"} now.`, found };
}
