import { isAbsolute, join, resolve } from "node:path";
import { z } from "zod";
import type { DataPaths } from "../config/paths.ts";
import type { DaemonSettings } from "../config/settings.ts";
import type { EventLog } from "../events/eventLog.ts";
import type { Logger } from "../log/logger.ts";
import type { Vault } from "../vault/vault.ts";
import { APPROVAL_MODES } from "./approvals/mode.ts";
import type { ApprovalServices } from "./approvals/services.ts";
import { BUILTIN_TOOLS } from "./builtin/index.ts";
import { detectCommandSandbox, type SandboxStatus, UNSANDBOXED_WARNING } from "./commandSandbox.ts";
import { effectiveToolSchema, effectiveTools, toolResourceSchema } from "./effective.ts";
import { type DaemonFiles, daemonFiles, PROTECTED_DESCRIPTION, PROTECTED_RULE } from "./policy/daemonFiles.ts";
import { PATH_LISTS, policyPathViews } from "./policy/pathViews.ts";
import { PolicySource } from "./policySource.ts";
import { ToolRegistry } from "./registry.ts";
import { ToolRunner } from "./runner.ts";
import { type Tool, type ToolContext, ToolFailure } from "./tool.ts";

/** What the effective view and doctor say about the command sandbox. */
export function sandboxView(status: SandboxStatus): EffectiveView["command_sandbox"] {
  if (status.available) return { available: true, description: status.description };
  return {
    available: false,
    description: `${UNSANDBOXED_WARNING} (${status.reason}); allowed_commands: ['*'] then needs unsandboxed_commands_acknowledged: true`,
  };
}

function policyStatus(problem: string | null): EffectiveView["policy_status"] {
  if (problem === null) return "ok";
  if (problem.endsWith("missing")) return "missing";
  if (problem.endsWith("empty")) return "empty";
  return "invalid";
}

// The daemon's tool services: the registry of built-in tools, the live policy and the one runner every surface
// (agent loop, HTTP invoke) goes through.

export const toolInfoSchema = z
  .object({
    name: z.string(),
    description: z.string(),
    resource: toolResourceSchema,
    /** JSON Schema of the parameters (what the model is given). */
    parameters: z.record(z.string(), z.unknown()),
  })
  .meta({ id: "Tool" });

export type ToolInfo = z.infer<typeof toolInfoSchema>;

export const effectiveViewSchema = z
  .object({
    policy_file: z.string(),
    /** `ok`, or why everything is denied: missing, empty or invalid file. */
    policy_status: z.enum(["ok", "missing", "empty", "invalid"]),
    problem: z.string().nullable(),
    mode: z.enum(APPROVAL_MODES),
    default_profile: z.string().nullable(),
    /** The built-in rules no policy lifts, e.g. `protected: daemon data`, with what they cover. */
    builtin_rules: z.array(z.object({ rule: z.string(), description: z.string() })),
    /** Whether run_command children are sandboxed away from the daemon's files, and how. */
    command_sandbox: z.object({ available: z.boolean(), description: z.string() }),
    /** The daemon's working directory: `.` and other relative path entries of the policy are relative to it. */
    working_directory: z.string(),
    /** Every entry of allowed_read_paths and allowed_write_paths, with the folder it allows and a warning when that is the home folder or `/`. */
    paths: z.array(
      z.object({
        list: z.enum(PATH_LISTS),
        entry: z.string(),
        path: z.string(),
        warning: z.string().nullable(),
      }),
    ),
    tools: z.array(effectiveToolSchema),
  })
  .meta({ id: "EffectiveTools" });

export type EffectiveView = z.infer<typeof effectiveViewSchema>;

/** The environment settings the tools domain reads (config/envVariables.ts). */
export type ToolSettings = ToolContext["settings"] &
  Pick<DaemonSettings, "toolsJournalPath" | "supervisorPid" | "commandSandbox">;

export interface ToolServices {
  runner: ToolRunner;
  /** Built-ins plus what skills and plugins add (they register here). */
  registry: ToolRegistry;
  policy: PolicySource;
  daemonFiles: DaemonFiles;
  /** The command sandbox, detected on first use. */
  sandbox(): SandboxStatus;
  /** The registry as the model sees it. */
  list(): ToolInfo[];
  effective(): EffectiveView;
}

export function createToolServices(options: {
  paths: DataPaths;
  /** What run_command children inherit (the minimal part of it). */
  env: NodeJS.ProcessEnv;
  settings: ToolSettings;
  vault: Pick<Vault, "has" | "get">;
  approvals: ApprovalServices;
  events: Pick<EventLog, "emit">;
  logger: Pick<Logger, "warn">;
  /** The daemon's working directory (`.` in the policy); default process.cwd(). */
  cwd?: string;
}): ToolServices {
  const { paths, env, settings, vault, approvals } = options;
  const cwd = options.cwd ?? process.cwd();
  const journal = settings.toolsJournalPath;
  const journalPath = journal ? (isAbsolute(journal) ? journal : resolve(cwd, journal)) : paths.toolsJournal;
  // Files the daemon owns outside the data directory: the journal and a router file kept in the project.
  const ownedOutside = [journalPath, join(cwd, "llm_router.yaml")];
  const supervisor = settings.supervisorPid;
  const files = daemonFiles({
    paths,
    extraNoWrite: ownedOutside,
    pids: supervisor !== undefined ? [process.pid, supervisor] : [process.pid],
  });
  let sandboxStatus: SandboxStatus | undefined;
  const sandbox = () =>
    (sandboxStatus ??= detectCommandSandbox({
      dataDir: files.dataDir,
      workspaceDir: resolve(files.dataDir, "workspace"),
      readOnly: ownedOutside,
      setting: settings.commandSandbox,
    }));
  const policy = new PolicySource({
    file: paths.toolsPolicy,
    cwd,
    decisions: approvals.decisions,
    mode: approvals.mode,
    daemonFiles: files,
    sandboxed: () => sandbox().available,
  });
  const registry = new ToolRegistry(BUILTIN_TOOLS);
  const runner = new ToolRunner({
    tools: registry,
    policy,
    queue: approvals.queue,
    events: options.events,
    logger: options.logger,
    env,
    settings,
    workspace: paths.workspaceDir,
    journalPath,
    daemonFiles: files,
    sandbox,
    secret: (key) => {
      try {
        return vault.has(key) ? vault.get(key) : null;
      } catch (error) {
        throw new ToolFailure(`the vault cannot be read: ${(error as Error).message}`);
      }
    },
  });
  // JSON Schema conversion is not free: done once per tool object (a reloaded plugin brings new objects).
  const infos = new WeakMap<Tool, ToolInfo>();
  const infoOf = (tool: Tool): ToolInfo => {
    let info = infos.get(tool);
    if (!info) {
      info = {
        name: tool.name,
        description: tool.description,
        resource: tool.resource,
        parameters: tool.jsonSchema ?? (z.toJSONSchema(tool.parameters) as Record<string, unknown>),
      };
      infos.set(tool, info);
    }
    return info;
  };
  return {
    runner,
    registry,
    policy,
    daemonFiles: files,
    sandbox,
    list: () => runner.list().map(infoOf),
    effective: () => {
      const snapshot = policy.current();
      return {
        policy_file: snapshot.file,
        policy_status: policyStatus(snapshot.problem),
        problem: snapshot.problem,
        mode: snapshot.engine.mode,
        default_profile: snapshot.policy?.default_profile ?? null,
        builtin_rules: [{ rule: PROTECTED_RULE, description: PROTECTED_DESCRIPTION }],
        command_sandbox: sandboxView(sandbox()),
        working_directory: snapshot.cwd,
        paths: snapshot.policy ? policyPathViews(snapshot.policy, snapshot.cwd) : [],
        tools: effectiveTools(runner.list(), snapshot, approvals.decisions.all()),
      };
    },
  };
}
