import type { z } from "zod";
import type { ToolsPolicy } from "../config/schemas/toolsPolicy.ts";
import type { DaemonSettings } from "../config/settings.ts";
import type { SandboxStatus } from "./commandSandbox.ts";
import { type DaemonFiles, PROTECTED_RULE, SOURCE_PROTECTED } from "./policy/daemonFiles.ts";
import type { Decision, ToolRequest, ToolRequestKind } from "./policy/types.ts";

// A tool is one file (docs/tools.md#the-built-in-tools): a name, a description written for the model, zod parameters
// and `execute(args, ctx)`. The framework (runner.ts) validates arguments, truncates and marks output, turns failures
// into results and emits events; a tool only does its one job and asks `ctx.permit` before touching anything.

/** What a tool touches: the effective view (`GET /api/tools/effective`) and what it may ask the policy about. */
export type ToolResource = "read" | "write" | "command" | "web" | "skill_install" | "none";

/**
 * The permission requests a tool of each resource may make; the runner refuses any other kind (a bug in the tool:
 * the call fails as `error`, a warning is logged, nothing is allowed). A resource-free tool is asked about as a
 * whole (`tool`, by the runner itself), so a resource tool can never pass as one. run_command also asks `read`
 * for its working directory; write_file asks `write` only. No tool has the `device` or `browser` resource yet,
 * so no tool may ask those. A tool adds kinds it needs besides its resource's in `Tool.asks` (plugin tools:
 * `web` for their allowed_hosts, `read` and `write` for their allowed_paths).
 */
export const RESOURCE_REQUESTS: Readonly<Record<ToolResource, readonly ToolRequestKind[]>> = {
  read: ["read"],
  write: ["write"],
  command: ["command", "read"],
  web: ["web"],
  skill_install: ["skill_install"],
  none: ["tool"],
};

/** A permission request as a tool makes it: the runner adds the calling tool's own name. */
export type PermitRequest = ToolRequest extends infer R ? (R extends ToolRequest ? Omit<R, "tool"> : never) : never;

export interface ToolContext {
  /** The daemon's working directory: what `.` and relative paths mean. */
  readonly cwd: string;
  /** The task's workspace directory (run_command_default_cwd_workspace). */
  readonly workspace: string;
  /** Where file writes are journaled (ASSISTANT_TOOLS_JOURNAL_PATH, default logs/tools_journal.jsonl). */
  readonly journalPath: string;
  readonly env: NodeJS.ProcessEnv;
  /** The environment settings tools read at call time (the message webhook, the search endpoint). */
  readonly settings: Pick<DaemonSettings, "messageWebhookUrl" | "webSearchUrl">;
  /** The parsed tools_policy.yaml, or null when it is missing, empty or invalid (deny everything). */
  readonly policy: ToolsPolicy | null;
  /** The daemon's own files: a walk skips them, a read refuses a hard link to one of them. */
  readonly daemonFiles: DaemonFiles;
  /** The sandbox run_command children run in, or why there is none (asked on first use). */
  sandbox(): SandboxStatus;
  /** Aborts when the call is cancelled (task cancel, HTTP client gone, daemon stop). */
  readonly signal: AbortSignal;
  readonly taskId?: string;
  readonly sessionId?: string;
  /**
   * Asks the policy about one resource. Resolves with the allowing decision, after waiting for the review queue
   * when the policy asks; throws ToolDenied when it denies or the operator denies or the item expires.
   */
  permit(request: PermitRequest): Promise<Decision>;
  /** A vault secret, or null when the key is not set. */
  secret(key: string): string | null;
  /** Streams a line of progress to whoever watches the call (search matches, command output). */
  progress(text: string): void;
}

/** How a call ends (ToolResult.status, tool_call_completed). */
export const TOOL_CALL_STATUSES = ["ok", "denied", "error", "invalid_arguments"] as const;
export type ToolCallStatus = (typeof TOOL_CALL_STATUSES)[number];

/** What a tool returns; the framework adds the truncation and untrusted-data markers. */
export interface ToolOutput {
  text: string;
  /**
   * Where the text came from when it is outside content (a file, a web page, command output): it is then
   * wrapped as untrusted data so the model treats it as data, never as instructions.
   */
  untrusted?: string;
}

export interface Tool<A = unknown> {
  name: string;
  description: string;
  parameters: z.ZodType<A>;
  resource: ToolResource;
  /** Request kinds the tool may ask besides its resource's (RESOURCE_REQUESTS). */
  asks?: readonly ToolRequestKind[];
  /** The parameters as JSON Schema when the tool was declared that way (plugin tools); else derived from zod. */
  jsonSchema?: Record<string, unknown>;
  execute(args: A, ctx: ToolContext): Promise<ToolOutput>;
}

/** Parameters of a tool declared in code: an object that refuses unknown keys (z.strictObject). */
type StrictParameters<S extends z.core.$ZodShape> = z.ZodObject<S, z.core.$strict>;

export interface ToolDefinition<S extends z.core.$ZodShape>
  extends Omit<Tool<z.output<StrictParameters<S>>>, "parameters" | "jsonSchema"> {
  parameters: StrictParameters<S>;
}

/**
 * Declares a tool with its argument type tied to its schema. The parameters must be a z.strictObject: an argument
 * the tool does not know is then an error the model reads and corrects, never silently dropped. zod gives strict
 * and stripping objects the same type, so this is checked when the tool is declared (at startup).
 */
export function defineTool<S extends z.core.$ZodShape>(tool: ToolDefinition<S>): Tool<z.output<StrictParameters<S>>> {
  if (tool.parameters.def.catchall?._zod.def.type !== "never") {
    throw new Error(`tool ${tool.name}: parameters must be a z.strictObject (unknown arguments are refused)`);
  }
  return tool;
}

/** A failure the model can read and act on (bad path, not found, timeout...). */
export class ToolFailure extends Error {
  override name = "ToolFailure";
}

/** A refusal by the built-in `protected: daemon data` rule made outside the engine (after a file was opened). */
export function protectedDenied(reason: string): ToolDenied {
  const rule = `${PROTECTED_RULE}: ${reason}`;
  return new ToolDenied(rule, SOURCE_PROTECTED, `Blocked by ${rule} (${SOURCE_PROTECTED}).`);
}

/** The policy or the operator refused the call. */
export class ToolDenied extends Error {
  override name = "ToolDenied";
  readonly rule: string;
  readonly source: string;
  readonly queueItemId: string | undefined;

  constructor(rule: string, source: string, message: string, queueItemId?: string) {
    super(message);
    this.rule = rule;
    this.source = source;
    this.queueItemId = queueItemId;
  }
}
