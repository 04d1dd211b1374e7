import { z } from "zod";
import type { ToolsPolicy } from "../config/schemas/toolsPolicy.ts";
import { EFFECTS } from "./approvals/decisions.ts";
import { resolvePolicyPath } from "./policy/paths.ts";
import { shownEntry } from "./policy/pathViews.ts";
import type { PersistentDecision } from "./policy/types.ts";
import { SOURCE_DEFAULT, SOURCE_MODE } from "./policy/types.ts";
import type { PolicySnapshot } from "./policySource.ts";
import { RESOURCE_REQUESTS, type Tool, type ToolResource } from "./tool.ts";

// The effective view (GET /api/tools/effective, `assistant toolset effective`): for every tool, whether the policy
// in force lets it run, makes it wait for approval or blocks it, the rule that says so, and what it may touch.
// Resource-free tools are asked of the engine itself; resource tools are summarised from their allow lists
// (each call is still decided per resource by the engine).

export const EFFECTIVE_STATUSES = ["allowed", "needs_approval", "blocked"] as const;
export type EffectiveStatus = (typeof EFFECTIVE_STATUSES)[number];

/** The resource kinds a tool may declare. */
export const toolResourceSchema = z.enum(Object.keys(RESOURCE_REQUESTS) as [ToolResource, ...ToolResource[]]);

export const effectiveToolSchema = z
  .object({
    name: z.string(),
    resource: toolResourceSchema,
    status: z.enum(EFFECTIVE_STATUSES),
    rule: z.string(),
    source: z.string(),
    /** Allow-list entries that apply to the tool (paths, commands, domains). */
    allowed: z.array(z.string()),
    /** Deny-list entries that apply to the tool. */
    blocked: z.array(z.string()),
    /** Persistent decisions recorded for the tool. */
    decisions: z.array(z.object({ id: z.string(), scope: z.string(), effect: z.enum(EFFECTS) })),
  })
  .meta({ id: "EffectiveTool" });

export type EffectiveTool = z.infer<typeof effectiveToolSchema>;

const LISTS: Record<Exclude<ToolResource, "none">, { allow: keyof ToolsPolicy; deny?: keyof ToolsPolicy }> = {
  read: { allow: "allowed_read_paths" },
  write: { allow: "allowed_write_paths" },
  command: { allow: "allowed_commands", deny: "blocked_commands" },
  web: { allow: "allowed_web_domains", deny: "blocked_web_domains" },
  skill_install: { allow: "allowed_skill_install_hosts", deny: "blocked_web_domains" },
};

export function effectiveTools(
  tools: readonly Tool[],
  snapshot: PolicySnapshot,
  decisions: readonly PersistentDecision[],
): EffectiveTool[] {
  return tools.map((tool) => {
    const mine = decisions.filter((d) => d.tool === tool.name).map(({ id, scope, effect }) => ({ id, scope, effect }));
    const base = { name: tool.name, resource: tool.resource, decisions: mine };
    const policy = snapshot.policy;
    if (policy === null) {
      const rule = `default: ${snapshot.problem ?? "no tools policy"} (deny by default)`;
      return { ...base, status: "blocked", rule, source: SOURCE_DEFAULT, allowed: [], blocked: [] };
    }
    if (tool.resource === "none") {
      const decision = snapshot.engine.decide({ kind: "tool", tool: tool.name });
      return {
        ...base,
        status: statusOf(decision.effect),
        rule: decision.rule,
        source: decision.source,
        allowed: [],
        blocked: [],
      };
    }
    const lists = LISTS[tool.resource];
    const allowed = [...(policy[lists.allow] as string[])];
    const blocked = lists.deny ? [...(policy[lists.deny] as string[])] : [];
    const file = snapshot.file;
    const profile = policy.default_profile;
    if (profile !== undefined && !policy.tool_profiles[profile]?.includes(tool.name)) {
      const rule = `default_profile: profile ${profile} does not include ${tool.name}`;
      return { ...base, status: "blocked", rule, source: file, allowed, blocked };
    }
    if (allowed.length === 0) {
      return { ...base, status: "blocked", rule: `${lists.allow} is empty`, source: file, allowed, blocked };
    }
    if (policy.require_approval.includes(tool.name)) {
      if (snapshot.engine.mode === "allow_all") {
        return { ...base, status: "allowed", rule: "mode: allow_all", source: SOURCE_MODE, allowed, blocked };
      }
      return {
        ...base,
        status: "needs_approval",
        rule: `require_approval: ${tool.name}`,
        source: file,
        allowed,
        blocked,
      };
    }
    // A relative path entry is shown with the folder it means here (`.` is the daemon's working directory).
    const shown =
      lists.allow === "allowed_read_paths" || lists.allow === "allowed_write_paths"
        ? allowed.map((entry) => shownEntry(entry, resolvePolicyPath(entry, snapshot.cwd)))
        : allowed;
    return {
      ...base,
      status: "allowed",
      rule: `${lists.allow}: ${shown.join(", ")}`,
      source: file,
      allowed,
      blocked,
    };
  });
}

function statusOf(effect: "allow" | "deny" | "ask"): EffectiveStatus {
  return effect === "allow" ? "allowed" : effect === "ask" ? "needs_approval" : "blocked";
}
