import { parseDocument } from "yaml";
import * as z from "zod";
import { routingRulesSchema } from "../plugins/routingRules.ts";
import { parseJsonWith } from "../util/parseJson.ts";

// One skill folder's files read into a checked shape (docs/skills.md, the Agent Skills format): SKILL.md with
// YAML frontmatter between `---` lines (required `name` and `description`) and a Markdown body, and the optional
// catalog file skill.json. Anything wrong is one readable reason; a skill is loaded whole or not at all.

/** SKILL.md past this is not instructions but a mistake, and it would not fit a small model's context anyway. */
export const MAX_SKILL_MD_BYTES = 256 * 1024;
export const MAX_SKILL_JSON_BYTES = 64 * 1024;

export const SKILL_NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/;

const frontmatterSchema = z.object({
  name: z
    .string({ error: "`name` is required" })
    .max(64, "`name` is longer than 64 characters")
    .regex(SKILL_NAME, "`name` must be lowercase letters, digits and single hyphens (for example pdf-tools)"),
  description: z
    .string({ error: "`description` is required" })
    .trim()
    .min(1, "`description` is empty")
    .max(1024, "`description` is longer than 1024 characters"),
  license: z.string().max(200).optional(),
  compatibility: z.string().max(500, "`compatibility` is longer than 500 characters").optional(),
  metadata: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]).transform(String)).optional(),
  "allowed-tools": z.string().max(2000).optional(),
});

export const catalogSchema = z.object({
  id: z.string().max(200).optional(),
  name: z.string().max(200).optional(),
  version: z.string().max(64).optional(),
  description: z.string().max(2000).optional(),
  author: z.string().max(200).optional(),
  category: z.string().max(100).optional(),
  tags: z.array(z.string().max(64)).max(50).optional(),
  icon: z.string().max(2000).optional(),
  featured: z.boolean().optional(),
  install_url: z.string().max(2000).optional(),
  install_command: z.string().max(2000).optional(),
  trust_level: z.string().max(64).optional(),
  compat_status: z.string().max(64).optional(),
  routing_rules: routingRulesSchema.optional(),
});

export type SkillCatalog = z.output<typeof catalogSchema>;

export const skillDocumentSchema = z.object({
  name: z.string(),
  description: z.string(),
  license: z.string().nullable(),
  compatibility: z.string().nullable(),
  metadata: z.record(z.string(), z.string()),
  /** Commands the skill declares it runs (`Bash(git:*)` entries of `allowed-tools`). */
  commands: z.array(z.string()),
  body: z.string(),
});

export type SkillDocument = z.infer<typeof skillDocumentSchema>;

/** The reason a skill file is unusable, for the person who wrote or installed it. */
export class SkillInvalid extends Error {
  override name = "SkillInvalid";
}

/** Parses SKILL.md. `folder` is the folder name the skill lives in (it must equal `name`), or null when unknown. */
export function parseSkillMd(text: string, folder: string | null): SkillDocument {
  const source = text.replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n");
  if (Buffer.byteLength(source) > MAX_SKILL_MD_BYTES) {
    throw new SkillInvalid(`SKILL.md is larger than ${MAX_SKILL_MD_BYTES / 1024} KiB`);
  }
  if (!source.startsWith("---\n")) throw new SkillInvalid("SKILL.md does not start with a `---` frontmatter line");
  const end = source.indexOf("\n---", 3);
  if (end < 0 || (source[end + 4] !== undefined && source[end + 4] !== "\n")) {
    throw new SkillInvalid("SKILL.md frontmatter has no closing `---` line");
  }
  const doc = parseDocument(source.slice(4, end + 1), { uniqueKeys: true });
  if (doc.errors.length > 0)
    throw new SkillInvalid(`SKILL.md frontmatter is not valid YAML: ${doc.errors[0]!.message}`);
  const parsed = frontmatterSchema.safeParse(doc.toJS({ maxAliasCount: 0 }) ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new SkillInvalid(
      `SKILL.md frontmatter: ${issue.message}${issue.path.length ? ` (${issue.path.join(".")})` : ""}`,
    );
  }
  const fm = parsed.data;
  if (folder !== null && fm.name !== folder) {
    throw new SkillInvalid(`SKILL.md names the skill "${fm.name}" but its folder is "${folder}"; they must be equal`);
  }
  const body = source
    .slice(end + 4)
    .replace(/^\n/, "")
    .trim();
  if (body.length === 0) throw new SkillInvalid("SKILL.md has no instructions after the frontmatter");
  return {
    name: fm.name,
    description: fm.description,
    license: fm.license ?? null,
    compatibility: fm.compatibility ?? null,
    metadata: fm.metadata ?? {},
    commands: declaredCommands(fm["allowed-tools"] ?? ""),
    body,
  };
}

/** `Bash(git:*) Bash(jq) Read` -> [git, jq]: the executables a skill says it runs. */
function declaredCommands(allowedTools: string): string[] {
  const commands = new Set<string>();
  for (const m of allowedTools.matchAll(/Bash\(([^):\s]+)[^)]*\)/g)) {
    const command = m[1]!;
    if (/^[A-Za-z0-9_.+-]{1,64}$/.test(command)) commands.add(command);
  }
  return [...commands];
}

/** Parses skill.json (catalog listing and routing rules). */
export function parseSkillJson(text: string): SkillCatalog {
  if (Buffer.byteLength(text) > MAX_SKILL_JSON_BYTES) {
    throw new SkillInvalid(`skill.json is larger than ${MAX_SKILL_JSON_BYTES / 1024} KiB`);
  }
  try {
    return parseJsonWith(catalogSchema, text, "skill.json");
  } catch (error) {
    throw new SkillInvalid((error as Error).message);
  }
}
