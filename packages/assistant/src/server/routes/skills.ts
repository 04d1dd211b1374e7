import { z } from "zod";
import type { Services } from "../../runtime/services.ts";
import { invalidSkillSchema, reloadResultSchema, skillInfoSchema, skillSchema } from "../../skills/registry.ts";
import { skillInstallResultSchema } from "../../skills/skillService.ts";
import { AppError } from "../../util/errors.ts";
import { defineRoute, type RouteSpec } from "../route.ts";

// Skills (docs/skills.md): list, one skill with its instructions, rescan, install from
// an allowed HTTPS host, uninstall. Thin over skills/ (the same services as /skills and the install_skill tool).

const nameParams = z.strictObject({ name: z.string().min(1).max(128) });
const installBody = z.strictObject({
  url: z.string().min(1).max(2000),
  replace: z.boolean().optional(),
});

export function skillRoutes(services: Services): RouteSpec[] {
  const { registry, service } = services.skills;
  return [
    defineRoute({
      method: "GET",
      url: "/api/skills",
      operationId: "listSkills",
      response: z
        .object({
          items: z.array(skillInfoSchema),
          invalid: z.array(invalidSkillSchema),
          next_cursor: z.string().nullable(),
        })
        .meta({ id: "SkillList" }),
      summary: "Installed skills (name, description, catalog fields, files) and skipped folders with the reason",
      tag: "skills",
      handler: () => ({ items: registry.list(), invalid: registry.invalid(), next_cursor: null }),
    }),
    defineRoute({
      method: "GET",
      url: "/api/skills/:name",
      operationId: "getSkill",
      response: skillSchema,
      errors: ["not_found"],
      summary: "One skill with its instructions",
      tag: "skills",
      params: nameParams,
      handler: ({ params }) => {
        const skill = registry.get(params.name);
        if (!skill) throw new AppError("not_found", `no skill named ${params.name}`);
        return skill;
      },
    }),
    defineRoute({
      method: "POST",
      url: "/api/skills/reload",
      operationId: "reloadSkills",
      response: reloadResultSchema,
      summary: "Rescans data_dir/skills without a restart",
      tag: "skills",
      handler: () => registry.reload(),
    }),
    defineRoute({
      method: "POST",
      url: "/api/skills/install",
      operationId: "installSkill",
      status: 201,
      response: skillInstallResultSchema,
      errors: ["not_found", "conflict", "policy_denied"],
      summary: "Installs a skill from an HTTPS URL on a host in allowed_skill_install_hosts",
      tag: "skills",
      body: installBody,
      handler: ({ body }) => service.installAsOperator(body.url, body.replace === true),
    }),
    defineRoute({
      method: "DELETE",
      url: "/api/skills/:name",
      operationId: "uninstallSkill",
      response: z.object({ removed: z.string() }),
      errors: ["not_found"],
      summary: "Removes a skill's folder",
      tag: "skills",
      params: nameParams,
      handler: ({ params }) => {
        registry.uninstall(params.name);
        return { removed: params.name };
      },
    }),
  ];
}
