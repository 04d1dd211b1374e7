import { type Dirent, readdirSync, rmSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { z } from "zod";
import type { EventLog } from "../events/eventLog.ts";
import type { Logger } from "../log/logger.ts";
import { loadRules, type RoutingRule } from "../plugins/routingRules.ts";
import { AppError } from "../util/errors.ts";
import { readBoundedFile } from "../util/readBounded.ts";
import {
  catalogSchema,
  MAX_SKILL_JSON_BYTES,
  MAX_SKILL_MD_BYTES,
  parseSkillJson,
  parseSkillMd,
  SkillInvalid,
  skillDocumentSchema,
} from "./skillFile.ts";

// The installed skills: every data_dir/skills/<name>/SKILL.md, scanned at start and on reload. A skill that does
// not parse is listed with its reason and skipped whole. The agent sees only the compact index (name and
// description); a skill's body enters a prompt only when the agent loads it (progressive disclosure).

export const SKILL_FOLDERS = ["references", "scripts", "assets"] as const;
/** Files listed per skill folder: enough to find a reference, never a full tree dump. */
const MAX_LISTED_FILES = 200;
/** The skills index in the system prompt: at most this many characters (about 300 tokens), descriptions cut. */
const INDEX_MAX_CHARS = 1200;
const INDEX_DESCRIPTION_CHARS = 120;
/** A file the agent reads out of a skill folder (use_skill with `file`). */
export const MAX_SKILL_READ_BYTES = 256 * 1024;

export const skillSchema = skillDocumentSchema
  .extend({
    /** The skill's folder. */
    path: z.string(),
    catalog: catalogSchema.nullable(),
    /** Files under references/, scripts/ and assets/, relative to the folder, `/`-separated. */
    files: z.array(z.string()),
  })
  .meta({ id: "Skill" });

export type Skill = z.infer<typeof skillSchema>;

/** A skill as the API lists it (no body). */
export const skillInfoSchema = skillSchema
  .omit({ body: true })
  .extend({ body_chars: z.number() })
  .meta({ id: "SkillInfo" });

export type SkillInfo = z.infer<typeof skillInfoSchema>;

/** A skill folder that was skipped, and why. */
export const invalidSkillSchema = z.object({ folder: z.string(), reason: z.string() }).meta({ id: "InvalidSkill" });

export type InvalidSkill = z.infer<typeof invalidSkillSchema>;

export const reloadResultSchema = z
  .object({ loaded: z.array(z.string()), invalid: z.array(invalidSkillSchema) })
  .meta({ id: "SkillReload" });

export type ReloadResult = z.infer<typeof reloadResultSchema>;

export class SkillRegistry {
  readonly #dir: string;
  readonly #events: Pick<EventLog, "emit"> | undefined;
  readonly #logger: Pick<Logger, "warn"> | undefined;
  #skills = new Map<string, Skill>();
  #invalid: InvalidSkill[] = [];
  #rules: RoutingRule[] = [];

  constructor(options: { dir: string; events?: Pick<EventLog, "emit">; logger?: Pick<Logger, "warn"> }) {
    this.#dir = options.dir;
    this.#events = options.events;
    this.#logger = options.logger;
    this.#scan();
  }

  get dir(): string {
    return this.#dir;
  }

  /** Rescans the folder (`/skills reload`, `POST /api/skills/reload`, after an install or uninstall). */
  reload(): ReloadResult {
    this.#scan();
    const result = { loaded: [...this.#skills.keys()], invalid: this.#invalid };
    this.#events?.emit("skills_reloaded", { loaded: result.loaded.length, invalid: result.invalid.length });
    return result;
  }

  list(): SkillInfo[] {
    return [...this.#skills.values()].map(({ body, ...rest }) => ({ ...rest, body_chars: body.length }));
  }

  invalid(): InvalidSkill[] {
    return this.#invalid;
  }

  get(name: string): Skill | undefined {
    return this.#skills.get(name);
  }

  /** Routing rules the skills declare in skill.json. */
  rules(): RoutingRule[] {
    return this.#rules;
  }

  /**
   * The compact index the system prompt carries; empty when no skill is installed. It stays within
   * INDEX_MAX_CHARS (about 300 tokens, part of the prompt budget in docs/agent.md#how-the-model-sees-tools): each
   * description is cut to its start, skills past the budget are listed by name, then only counted.
   */
  index(): string {
    if (this.#skills.size === 0) return "";
    const lines = ["Skills (call use_skill with the name to read one before following it):"];
    let used = lines[0]!.length;
    const unlisted: string[] = [];
    for (const s of this.#skills.values()) {
      const line = `- ${s.name}: ${cutOnWord(s.description, INDEX_DESCRIPTION_CHARS)}`;
      // Room is kept for the closing line about the skills that do not fit.
      if (unlisted.length === 0 && used + line.length + 1 <= INDEX_MAX_CHARS - 80) {
        lines.push(line);
        used += line.length + 1;
      } else unlisted.push(s.name);
    }
    if (unlisted.length > 0) {
      const names = `- also: ${unlisted.join(", ")}`;
      lines.push(
        used + names.length + 1 <= INDEX_MAX_CHARS
          ? names
          : `- and ${unlisted.length} more (use_skill with an unknown name lists them)`,
      );
    }
    return lines.join("\n");
  }

  /** A file of a skill's references/, scripts/ or assets/ as text. */
  readFile(name: string, file: string): string {
    const skill = this.#require(name);
    const normalised = file.replaceAll("\\", "/").replace(/^\.\//, "");
    if (!skill.files.includes(normalised)) {
      throw new AppError(
        "not_found",
        `skill ${name} has no file ${file}; its files: ${skill.files.join(", ") || "none"}`,
      );
    }
    const label = `${name}/${normalised}`;
    try {
      const text = readBoundedFile(join(skill.path, ...normalised.split("/")), MAX_SKILL_READ_BYTES, label);
      if (text === null) throw new Error(`${label} is gone; reload the skills`);
      return text.toString("utf8");
    } catch (error) {
      throw new AppError("invalid_request", (error as Error).message);
    }
  }

  /** Removes a skill's folder, valid or not (`/skills uninstall`, `DELETE /api/skills/:name`). */
  uninstall(name: string): void {
    if (!/^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}$/.test(name)) {
      throw new AppError("invalid_request", `"${name.slice(0, 80)}" is not a skill name`, { field: "name" });
    }
    const known = this.#skills.has(name) || this.#invalid.some((i) => i.folder === name);
    if (!known) throw new AppError("not_found", `no skill named ${name} is installed`);
    rmSync(join(this.#dir, name), { recursive: true, force: true });
    this.#events?.emit("skill_uninstalled", { name });
    this.reload();
  }

  #require(name: string): Skill {
    const skill = this.#skills.get(name);
    if (!skill) {
      const known = [...this.#skills.keys()];
      throw new AppError(
        "not_found",
        `no skill named ${name}${known.length ? `; installed: ${known.join(", ")}` : "; none is installed"}`,
      );
    }
    return skill;
  }

  #scan(): void {
    const skills = new Map<string, Skill>();
    const invalid: InvalidSkill[] = [];
    const rules: RoutingRule[] = [];
    let entries: Dirent[] = [];
    try {
      entries = readdirSync(this.#dir, { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
        this.#logger?.warn("cannot read the skills folder", { dir: this.#dir, error: (error as Error).message });
      }
    }
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      // Dot folders are installs in progress (and editor or VCS leftovers), never skills.
      if (entry.name.startsWith(".")) continue;
      const path = join(this.#dir, entry.name);
      if (!isDirectory(path)) continue;
      try {
        const skill = loadSkill(path, entry.name);
        const skillRules = skill.catalog?.routing_rules
          ? loadRules(
              skill.catalog.routing_rules,
              { kind: "skill", id: skill.name },
              { kind: "skill", name: skill.name },
            )
          : [];
        skills.set(skill.name, skill);
        rules.push(...skillRules);
      } catch (error) {
        const reason = error instanceof SkillInvalid || error instanceof AppError ? error.message : String(error);
        invalid.push({ folder: entry.name, reason });
        this.#logger?.warn("skill skipped", { folder: entry.name, reason });
      }
    }
    this.#skills = skills;
    this.#invalid = invalid;
    this.#rules = rules;
  }
}

/** The start of a text, cut on a word with an ellipsis when longer than `max`. */
function cutOnWord(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  const space = cut.lastIndexOf(" ");
  return `${space > max / 2 ? cut.slice(0, space) : cut}…`;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Reads and checks one skill folder; throws SkillInvalid with the reason. */
export function loadSkill(path: string, folder: string): Skill {
  const md = optionalFile(join(path, "SKILL.md"), MAX_SKILL_MD_BYTES, "SKILL.md");
  if (md === null) throw new SkillInvalid("the folder has no SKILL.md (uppercase file name)");
  const doc = parseSkillMd(md, folder);
  const json = optionalFile(join(path, "skill.json"), MAX_SKILL_JSON_BYTES, "skill.json");
  return { ...doc, path, catalog: json === null ? null : parseSkillJson(json), files: listSkillFiles(path) };
}

function optionalFile(path: string, maxBytes: number, label: string): string | null {
  try {
    return readBoundedFile(path, maxBytes, label)?.toString("utf8") ?? null;
  } catch (error) {
    throw new SkillInvalid((error as Error).message);
  }
}

/** Regular files under the optional folders, without following symlinks. */
function listSkillFiles(root: string): string[] {
  const files: string[] = [];
  const walk = (dir: string, depth: number) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (files.length >= MAX_LISTED_FILES) return;
      const path = join(dir, e.name);
      if (e.isFile()) files.push(relative(root, path).split(sep).join("/"));
      else if (e.isDirectory() && depth < 4) walk(path, depth + 1);
    }
  };
  for (const folder of SKILL_FOLDERS) walk(join(root, folder), 0);
  return files;
}
