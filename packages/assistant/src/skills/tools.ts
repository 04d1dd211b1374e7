import { z } from "zod";
import { defineTool, type Tool, ToolFailure } from "../tools/tool.ts";
import { isAppError } from "../util/errors.ts";
import { plural } from "../util/plural.ts";
import type { SkillRegistry } from "./registry.ts";
import type { SkillService } from "./skillService.ts";

// The agent's two skill tools. use_skill is progressive disclosure: the prompt only lists names and
// descriptions, and a skill's instructions (or one of its reference files) enter the context when the agent
// asks. install_skill downloads a skill; its hosts are checked by the policy (allowed_skill_install_hosts).

export function skillTools(registry: SkillRegistry, service: SkillService): Tool[] {
  const useSkill = defineTool({
    name: "use_skill",
    description:
      "Read an installed skill's instructions before following them (or one file of its references/, scripts/, assets/).",
    parameters: z.strictObject({
      name: z.string().min(1).max(64).describe("skill name from the Skills list"),
      file: z.string().min(1).max(300).optional().describe("a file of the skill, e.g. references/guide.md"),
    }),
    resource: "none",
    execute: async ({ name, file }) => {
      try {
        if (file !== undefined) return { text: registry.readFile(name, file), untrusted: `skill ${name}/${file}` };
        const skill = registry.get(name);
        if (!skill) throw new ToolFailure(`no skill named ${name}; installed: ${registryNames(registry)}`);
        const files =
          skill.files.length > 0 ? `\n\nFiles (read with use_skill and file): ${skill.files.join(", ")}` : "";
        return { text: `Skill ${skill.name} instructions:\n${skill.body}${files}` };
      } catch (error) {
        if (isAppError(error)) throw new ToolFailure(error.message);
        throw error;
      }
    },
  });
  const installSkill = defineTool({
    name: "install_skill",
    description:
      "Install a skill from an HTTPS URL of a raw SKILL.md or a repository folder holding one (allowed hosts only).",
    parameters: z.strictObject({
      url: z.string().min(1).max(2000).describe("https URL of SKILL.md or of the skill's folder"),
      replace: z.boolean().optional().describe("replace an installed skill of the same name"),
    }),
    resource: "skill_install",
    execute: async ({ url, replace }, ctx) => {
      try {
        const installed = await service.install(url, {
          replace: replace === true,
          permitHost: (host) => ctx.permit({ kind: "skill_install", host }),
          signal: ctx.signal,
          ...(ctx.taskId ? { taskId: ctx.taskId } : {}),
          ...(ctx.sessionId ? { sessionId: ctx.sessionId } : {}),
        });
        const lines = [
          `Installed skill ${installed.name} (${plural(installed.files.length, "file")}) from ${installed.source}.`,
        ];
        if (installed.not_executable.length > 0) {
          lines.push(`Written without the executable bit, for review first: ${installed.not_executable.join(", ")}.`);
        }
        if (installed.policy_change) {
          lines.push(
            `It runs ${installed.policy_change.commands.join(", ")}, not in allowed_commands yet: the user must ` +
              `approve review-queue item ${installed.policy_change.queue_item_id} to add them.`,
          );
        }
        return { text: lines.join("\n") };
      } catch (error) {
        if (isAppError(error)) throw new ToolFailure(error.message);
        throw error;
      }
    },
  });
  return [useSkill, installSkill];
}

function registryNames(registry: SkillRegistry): string {
  const names = registry.list().map((s) => s.name);
  return names.length > 0 ? names.join(", ") : "none";
}
