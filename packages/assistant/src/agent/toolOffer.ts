import type { LanguageModelV4FunctionTool } from "@ai-sdk/provider";
import { estimateTokens } from "../llm/prices.ts";
import type { ToolInfo, ToolServices } from "../tools/services.ts";
import { LOAD_TOOLS, loadToolsDefinition } from "./loadTools.ts";
import { PROMPT_BUDGET_TOKENS, toolDefinition } from "./prompt.ts";
import { primaryParameter, type TextToolSpec } from "./textToolCalls.ts";
import { keywords, mentionedTools, namedTools, relevance, shortLine } from "./toolMatch.ts";

// What the model is told about the tools of one work unit (docs/agent.md#how-the-model-sees-tools). Every tool the
// policy lets run is offered, but only some with their full schema: the core tools (and those the profile's rules
// or the skills index mention), the tools the message names (always, whatever the budget) and the few most
// relevant to it (by words, or because a routing rule of their plugin matched the message). The others are listed in a tool index in the system prompt, by name (and a short line when it
// fits); load_tools gives their schemas, and a direct call works too (the runner validates it against the real
// schema). Order is stable (core first, in registry order; the index in registry order) so prompt caches keep
// their prefix across messages.

/** Always sent with their schema when offered: what most tool-using chat turns need. */
export const CORE_TOOLS: readonly string[] = ["read_file", "list_dir", "search"];
/** When every offered schema fits in this, they are all sent and there is no index. */
const ALL_SCHEMAS_TOKENS = 700;
/** The tool index's share: one line per tool with its short line, else names only, else names cut with a count. */
const INDEX_TOKENS = 350;
/** Schemas of relevant (not named) tools per message, at most MAX_RELEVANT of them. */
const RELEVANT_TOKENS = 450;
const MAX_RELEVANT = 3;
/** Relevance a tool needs to be sent for a message (a word of its name, or two of its first sentence). */
const MIN_RELEVANCE = 2;
/** Kept free under PROMPT_BUDGET_TOKENS: the wire wraps each tool definition in a few more characters. */
const MARGIN_TOKENS = 100;

/** The tools the policy could let run, in registry order: a blocked tool only invites useless calls. */
export function offeredTools(tools: Pick<ToolServices, "list" | "effective">): ToolInfo[] {
  const usable = new Set(
    tools
      .effective()
      .tools.filter((t) => t.status !== "blocked")
      .map((t) => t.name),
  );
  return tools.list().filter((t) => usable.has(t.name));
}

export interface UnitPrompt {
  system: string;
  offer: ToolOffer;
  /** What the `TOOL:` text form may call: every offered tool, and load_tools when there is an index. */
  textTools: TextToolSpec[];
}

/**
 * The system prompt and tools of one work unit. The stable part comes first (profile, skills index, tool index),
 * then what changes per message (a routed skill's instructions, memories); the tools get what that leaves of
 * PROMPT_BUDGET_TOKENS.
 */
export function unitPrompt(options: {
  /** Profile and skills index (agent_profile.json, promptAddition). */
  base: string;
  message: string;
  instructions?: { source: string; text: string };
  /** The plugin whose routing rule matched the message. */
  plugin?: string;
  remembered?: string;
  tools: readonly ToolInfo[];
}): UnitPrompt {
  const { base, instructions, tools } = options;
  const routed = instructions ? `\nThis request matches ${instructions.source}; follow it:\n${instructions.text}` : "";
  const tail = `${routed}${options.remembered ? `\n\n${options.remembered}` : ""}`;
  const offer = offerTools({
    tools,
    text: instructions ? `${options.message}\n${instructions.text}` : options.message,
    pinned: mentionedTools(tools, base),
    ...(options.plugin ? { plugin: options.plugin } : {}),
    budgetTokens: PROMPT_BUDGET_TOKENS - estimateTokens(base + tail) - MARGIN_TOKENS,
  });
  const textTools = tools.map((t) => ({ name: t.name, primary: primaryParameter(t.parameters) }));
  if (offer.index) textTools.push({ name: LOAD_TOOLS, primary: "names" });
  return { system: `${base}${offer.index ? `\n${offer.index}` : ""}${tail}`, offer, textTools };
}

export interface ToolOffer {
  /** The definitions sent each round: core tools, load_tools when there is an index, then this message's tools. */
  defs: LanguageModelV4FunctionTool[];
  /** The system prompt's tool index ("" when every offered tool has its schema in `defs`). */
  index: string;
  /** Every offered tool by name: what load_tools and a direct call may reach. */
  offered: ReadonlyMap<string, ToolInfo>;
}

export interface OfferRequest {
  /** The tools the policy lets run, in registry order. */
  tools: readonly ToolInfo[];
  /** What the person asked (the message, plus the instructions of a skill a routing rule chose). */
  text: string;
  /** Tools mentioned by the system prompt (profile rules, skills index): sent with their schema like core tools. */
  pinned?: ReadonlySet<string>;
  /** The plugin whose routing rule matched the message: its tools count as relevant. */
  plugin?: string;
  /** Tokens the definitions and the index may take together (named tools are sent even beyond it). */
  budgetTokens: number;
}

export function offerTools(request: OfferRequest): ToolOffer {
  const { tools, text, budgetTokens } = request;
  const offered = new Map(tools.map((t) => [t.name, t]));
  const size = new Map(tools.map((t) => [t.name, tokensOf(toolDefinition(t))]));
  const total = [...size.values()].reduce((a, b) => a + b, 0);
  if (total <= Math.min(ALL_SCHEMAS_TOKENS, budgetTokens)) {
    return { defs: tools.map(toolDefinition), index: "", offered };
  }

  const named = new Set(namedTools(tools, text).map((t) => t.name));
  const core = new Set(
    tools.filter((t) => CORE_TOOLS.includes(t.name) || request.pinned?.has(t.name)).map((t) => t.name),
  );
  const wanted = keywords(text);
  const relevant: string[] = [];
  let relevantTokens = 0;
  for (const { tool } of tools
    .filter((t) => !named.has(t.name) && !core.has(t.name))
    .map((tool) => ({ tool, score: relevance(tool, wanted) + (routedTo(tool, request.plugin) ? MIN_RELEVANCE : 0) }))
    .filter((m) => m.score >= MIN_RELEVANCE)
    .sort((a, b) => b.score - a.score)
    .slice(0, MAX_RELEVANT)) {
    const cost = size.get(tool.name)!;
    if (relevantTokens + cost > RELEVANT_TOKENS) continue;
    relevant.push(tool.name);
    relevantTokens += cost;
  }

  // Over the budget (a long memory block, many pinned tools): relevant tools go first, then core ones (into the
  // index); named ones always stay.
  for (;;) {
    const offer = assemble(tools, core, new Set([...named, ...relevant]), offered);
    const used = tokensOf(offer.defs) + estimateTokens(offer.index);
    if (used <= budgetTokens) return offer;
    if (relevant.length > 0) relevant.pop();
    else {
      const droppable = [...core].filter((n) => !named.has(n)).at(-1);
      if (droppable === undefined) return offer;
      core.delete(droppable);
    }
  }
}

function assemble(
  tools: readonly ToolInfo[],
  core: ReadonlySet<string>,
  selected: ReadonlySet<string>,
  offered: ReadonlyMap<string, ToolInfo>,
): ToolOffer {
  // The index lists every tool not in the core set, selected ones included: it stays the same from message to
  // message, and only the schemas at the end of `defs` change.
  const indexed = tools.filter((t) => !core.has(t.name));
  const defs = [
    ...tools.filter((t) => core.has(t.name)).map(toolDefinition),
    ...(indexed.length > 0 ? [loadToolsDefinition] : []),
    ...tools.filter((t) => selected.has(t.name) && !core.has(t.name)).map(toolDefinition),
  ];
  return { defs, index: renderIndex(indexed), offered };
}

/** The tool index: `name: short line` per tool; names grouped by plugin when that is too long; then cut. */
export function renderIndex(tools: readonly ToolInfo[]): string {
  if (tools.length === 0) return "";
  const header = `More tools (call ${LOAD_TOOLS} with their names for their parameters first):`;
  const full = [header, ...tools.map((t) => `- ${t.name}: ${shortLine(t.description)}`)].join("\n");
  if (estimateTokens(full) <= INDEX_TOKENS) return full;

  const groups = new Map<string, string[]>();
  for (const tool of tools) {
    const at = tool.name.lastIndexOf("__");
    const group = at >= 0 ? `${tool.name.slice(0, at)}__` : "";
    groups.set(group, [...(groups.get(group) ?? []), at >= 0 ? tool.name.slice(at + 2) : tool.name]);
  }
  const lines = [header, "(`- x__: a, b` lists the tools x__a and x__b)"];
  let used = estimateTokens(lines.join("\n"));
  let left = tools.length;
  for (const [group, names] of groups) {
    const line = group ? `- ${group}: ${names.join(", ")}` : `- ${names.join(", ")}`;
    // Room is kept for the closing count line.
    if (used + estimateTokens(line) > INDEX_TOKENS - 20) break;
    lines.push(line);
    used += estimateTokens(line);
    left -= names.length;
  }
  if (left > 0) lines.push(`- and ${left} more: call ${LOAD_TOOLS} with words for what you need`);
  return lines.join("\n");
}

function routedTo(tool: ToolInfo, plugin: string | undefined): boolean {
  return plugin !== undefined && tool.name.startsWith(`${plugin}__`);
}

function tokensOf(value: unknown): number {
  return estimateTokens(JSON.stringify(value));
}
