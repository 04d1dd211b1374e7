// Shapes of the tool permission engine (permission as an explicit chain, docs/tools.md). Every decision
// names the rule that decided and where that rule lives, so the answer can be shown to the user and the model.

export type Effect = "allow" | "deny" | "ask";

/** Where a deciding rule lives. */
export const SOURCE_DEFAULT = "built-in default";
export const SOURCE_DECISIONS = "assistant.db decisions";
export const SOURCE_MODE = "approval mode";

export interface Decision {
  effect: Effect;
  /** The rule that decided, e.g. `blocked_commands: rm`, `decision #12`, `default: nothing allows this`. */
  rule: string;
  /** The file path of tools_policy.yaml, `assistant.db decisions`, `approval mode` or `built-in default`. */
  source: string;
}

/**
 * One tool call reduced to the resource it touches. Paths are already resolved by `resolveRequestPath`,
 * executables by `resolveExecutable`, so the decision itself does no I/O.
 */
export type ToolRequest =
  | { kind: "read"; tool: string; path: string }
  | { kind: "write"; tool: string; path: string }
  | { kind: "command"; tool: string; executable: string; argv: readonly string[] }
  | { kind: "web"; tool: string; url: URL }
  | { kind: "tool"; tool: string }
  | { kind: "device"; tool: string; interface: string }
  | { kind: "skill_install"; tool: string; host: string }
  | { kind: "browser"; tool: string; host: string };

export type ToolRequestKind = ToolRequest["kind"];

/** A remembered answer (`POST /api/permissions/decisions`). Scope: a command name, a path prefix, a domain or `*`. */
export interface PersistentDecision {
  id: string;
  tool: string;
  scope: string;
  effect: "allow" | "deny";
}

export type ApprovalMode = "ask_me" | "allow_all";
