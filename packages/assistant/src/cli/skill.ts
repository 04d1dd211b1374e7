import type { Command } from "commander";
import { plural } from "../util/plural.ts";
import { type CliContext, output } from "./context.ts";
import { callDaemon } from "./daemonClient.ts";

// `assistant skill list|reload|install <url>|uninstall <name>`: the daemon's skills (same services as /skills
// and the install_skill tool; an install from here is the operator's own and skips the approval step).

export function registerSkillCommands(program: Command, ctx: CliContext): void {
  const skill = program.command("skill").description("skills: SKILL.md folders the agent can follow");
  skill
    .command("list")
    .description("installed skills, and folders skipped with the reason")
    .option("--json", "machine-readable output")
    .action(async (opts: { json?: boolean }) => {
      const value = await callDaemon(ctx, "skills cannot be listed", (client) => client.listSkills());
      const { formatSkills } = await import("../skills/format.ts");
      output(ctx, opts.json, value, () => formatSkills(value.items, value.invalid, "`assistant skill reload`"));
    });
  skill
    .command("reload")
    .description("rescan the skills folder (after copying a skill folder in by hand)")
    .option("--json", "machine-readable output")
    .action(async (opts: { json?: boolean }) => {
      const value = await callDaemon(ctx, "skills cannot be reloaded", (client) => client.reloadSkills());
      const { formatReload } = await import("../skills/format.ts");
      output(ctx, opts.json, value, () => formatReload(value));
    });
  skill
    .command("install <url>")
    .description("install from an HTTPS URL of SKILL.md or a repository folder (allowed_skill_install_hosts)")
    .option("--replace", "replace an installed skill of the same name")
    .option("--json", "machine-readable output")
    .action(async (url: string, opts: { replace?: boolean; json?: boolean }) => {
      const value = await callDaemon(ctx, "the skill was not installed", (client) =>
        client.installSkill({ url, ...(opts.replace ? { replace: true } : {}) }),
      );
      output(ctx, opts.json, value, () => {
        const lines = [`Installed ${value.name} (${plural(value.files.length, "file")}) into ${value.path}.`];
        if (value.not_executable.length > 0) {
          lines.push(`Not executable until you review them: ${value.not_executable.join(", ")}.`);
        }
        if (value.policy_change) {
          lines.push(
            `It runs ${value.policy_change.commands.join(", ")}: approve adding them to allowed_commands with ` +
              `\`assistant permissions queue approve ${value.policy_change.queue_item_id}\`.`,
          );
        }
        return lines.join("\n");
      });
    });
  skill
    .command("uninstall <name>")
    .description("remove a skill's folder")
    .option("--json", "machine-readable output")
    .action(async (name: string, opts: { json?: boolean }) => {
      const value = await callDaemon(ctx, "the skill was not removed", (client) => client.uninstallSkill(name));
      output(ctx, opts.json, value, () => `Removed skill ${value.removed}.`);
    });
}
