import type { EffectiveTools } from "@assistant/client";
import type { Command } from "commander";
import { type CliContext, output } from "./context.ts";
import { callDaemon } from "./daemonClient.ts";

// `assistant toolset profiles|effective`: the tool profiles of tools_policy.yaml (read from the file, no daemon
// needed) and the effective view of every tool under the policy, decisions and mode in force (from the daemon).

export function registerToolsetCommands(program: Command, ctx: CliContext): void {
  const toolset = program.command("toolset").description("tool profiles and what each tool may do under the policy");
  toolset
    .command("profiles")
    .description("the tool_profiles of tools_policy.yaml and which one is the default_profile")
    .option("--json", "machine-readable output")
    .action(async (opts: { json?: boolean }) => {
      const { readPolicyFile } = await import("../tools/policySource.ts");
      const { policy, problem } = readPolicyFile(ctx.paths.toolsPolicy);
      const profiles = policy?.tool_profiles ?? {};
      const value = {
        policy_file: ctx.paths.toolsPolicy,
        problem,
        default_profile: policy?.default_profile ?? null,
        profiles,
      };
      output(ctx, opts.json, value, () => {
        if (problem) return `${problem}: every tool is denied. Run \`assistant doctor --fix\` to write a starter file.`;
        const names = Object.keys(profiles);
        if (names.length === 0) {
          return `No tool_profiles in ${ctx.paths.toolsPolicy}: every tool may be used within the path, command and web rules.`;
        }
        const lines = names.map((name) => {
          const mark = name === value.default_profile ? " (default_profile)" : "";
          return `${name}${mark}: ${profiles[name]!.join(", ") || "(no tools)"}`;
        });
        if (value.default_profile === null) lines.push("No default_profile: profiles do not restrict tools.");
        return lines.join("\n");
      });
    });
  toolset
    .command("effective")
    .description("every tool: allowed, needs approval or blocked, with the deciding rule (daemon must be up)")
    .option("--json", "machine-readable output")
    .action(async (opts: { json?: boolean }) => {
      const view = await callDaemon(ctx, "the effective tool policy cannot be read", (client) =>
        client.getEffectiveTools(),
      );
      const { table } = await import("../llm/format.ts");
      output(ctx, opts.json, view, () => formatEffective(view, table));
    });
}

const STATUS_LABEL = { allowed: "allowed", needs_approval: "needs approval", blocked: "blocked" } as const;

function formatEffective(view: EffectiveTools, table: (rows: string[][]) => string): string {
  const head =
    view.policy_status === "ok"
      ? `Policy ${view.policy_file}, mode ${view.mode}${view.default_profile ? `, profile ${view.default_profile}` : ""}`
      : `${view.problem}: every tool is denied (assistant doctor --fix writes a starter file)`;
  // Persistent decisions answer require_approval (allow) or block (deny): shown beside the rule they act on.
  const rows = [["TOOL", "STATUS", "RULE", "SOURCE", "DECISIONS"]];
  for (const t of view.tools) {
    const decisions = t.decisions.map((d) => `${d.effect} ${d.scope}`).join(", ");
    rows.push([t.name, STATUS_LABEL[t.status], t.rule, t.source, decisions]);
  }
  // What `.` and the other path entries mean for this daemon, and the ones that open too much.
  const paths = view.paths.map(
    (p) => `${p.list}: ${p.entry === p.path ? p.entry : `${p.entry} = ${p.path}`}${p.warning ? "  (warning)" : ""}`,
  );
  const where =
    paths.length > 0
      ? [`Paths (relative entries are relative to ${view.working_directory}):`, ...paths.map((line) => `  ${line}`)]
      : [];
  const warnings = view.paths.flatMap((p) => (p.warning ? [`Warning: ${p.warning}`] : []));
  const builtin = view.builtin_rules.map((r) => `Built-in, always: ${r.rule}. ${r.description}`);
  const sandbox = view.command_sandbox.available
    ? `Command sandbox: ${view.command_sandbox.description}`
    : `Warning: ${view.command_sandbox.description}`;
  return [head, table(rows), ...where, ...warnings, ...builtin, sandbox].join("\n");
}
