import { statSync } from "node:fs";
import { z } from "zod";
import { configFilePath, loadConfig } from "../config/configFiles.ts";
import type { DataPaths } from "../config/paths.ts";
import { type AgentProfile, FORMALITIES } from "../config/schemas/agentProfile.ts";
import { writeFileAtomic } from "../util/atomicWrite.ts";
import { AppError, ConfigError } from "../util/errors.ts";

// agent_profile.json as the running agent and the settings API see it. The agent asks for the profile at every
// task (`current()`), which re-reads the file only when its size, time or inode changed: a profile saved through
// the API (an atomic rename) or by hand applies to the next prompt without a restart. A file that stops validating
// keeps the last good profile in force (and says why through `problem`); the daemon never stops over it.

/** The profile as `GET /api/settings/agent-profile` answers it and `PUT` takes it: formality always present. */
export const agentProfileViewSchema = z
  .strictObject({
    name: oneLine("name", 80),
    role: oneLine("role", 200),
    personality: z.string().max(2000, "personality: at most 2,000 characters"),
    rules: z
      .array(
        oneLine("rule", 500).refine((rule) => rule.trim().length > 0, "a rule cannot be empty"),
        "rules: expected a list of strings",
      )
      .max(50, "rules: at most 50 rules"),
    formality: z.enum([...FORMALITIES, "default"] as const),
  })
  .meta({ id: "AgentProfile" });

export type AgentProfileView = z.infer<typeof agentProfileViewSchema>;

function oneLine(what: string, max: number) {
  return z
    .string()
    .max(max, `${what}: at most ${max} characters`)
    .refine((text) => !/[\u0000-\u001f\u007f]/.test(text), `${what}: one line, without control characters`);
}

export function profileView(profile: AgentProfile): AgentProfileView {
  return { ...profile, formality: profile.formality ?? "default" };
}

export class AgentProfileFile {
  readonly #paths: DataPaths;
  #stamp: string;
  #profile: AgentProfile;
  #problem: string | null = null;

  /** Loads the file once: an invalid profile at start stops the daemon (as every config file does). */
  constructor(paths: DataPaths) {
    this.#paths = paths;
    this.#stamp = stampOf(this.file);
    this.#profile = loadConfig("agent_profile", paths);
  }

  get file(): string {
    return configFilePath("agent_profile", this.#paths);
  }

  /** The profile in force for the next prompt. */
  current(): AgentProfile {
    const stamp = stampOf(this.file);
    if (stamp === this.#stamp) return this.#profile;
    this.#stamp = stamp;
    try {
      this.#profile = loadConfig("agent_profile", this.#paths);
      this.#problem = null;
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      this.#problem = `${error.message}; the previous profile stays in force`;
    }
    return this.#profile;
  }

  /** Why the file on disk is not the profile in force, or null. */
  get problem(): string | null {
    this.current();
    return this.#problem;
  }
}

/** The profile on disk (`GET /api/settings/agent-profile`); a file that does not validate is a config_invalid error. */
export function readAgentProfile(paths: DataPaths): AgentProfileView {
  return profileView(loadConfig("agent_profile", paths));
}

/**
 * Writes the whole profile (validated by agentProfileViewSchema) atomically; the agent's AgentProfileFile sees
 * the new file at the next prompt. "default" formality is stored as no key, as the file documents it.
 */
export function saveAgentProfile(paths: DataPaths, view: AgentProfileView): AgentProfileView {
  if (!view.name.trim())
    throw new AppError("invalid_request", "body.name: the name cannot be empty", { field: "body.name" });
  const { formality, ...rest } = view;
  const stored = formality === "default" ? rest : { ...rest, formality };
  writeFileAtomic(configFilePath("agent_profile", paths), `${JSON.stringify(stored, null, 2)}\n`);
  return readAgentProfile(paths);
}

function stampOf(file: string): string {
  const stat = statSync(file, { throwIfNoEntry: false });
  return stat ? `${stat.size}:${stat.mtimeMs}:${stat.ino}` : "missing";
}
