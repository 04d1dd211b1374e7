import type * as z from "zod";
import { ConfigError } from "../util/errors.ts";
import { readConfigText } from "../util/fileText.ts";
import { validateConfigValue } from "./configValue.ts";
import { readEnvFile } from "./envFile.ts";
import { type DataPaths, locateRouterFile } from "./paths.ts";
import { agentProfileSchema } from "./schemas/agentProfile.ts";
import { autonomousMissionSchema } from "./schemas/autonomousMission.ts";
import { llmRouterSchema } from "./schemas/llmRouter.ts";
import { toolsPolicySchema } from "./schemas/toolsPolicy.ts";
import { voiceRouterSchema } from "./schemas/voiceRouter.ts";
import { parseYaml, yamlDocumentValue } from "./yamlDocument.ts";

// One registry of the structured config files of the data directory. Loading, `assistant config validate`,
// doctor and `assistant paths` all derive from it, so a new file is declared once.

export interface ConfigFileSpec<S extends z.ZodType = z.ZodType> {
  id: string;
  fileName: string;
  format: "yaml" | "json";
  schema: S;
  /** Where the file is read from (and created by edits). */
  locate: (paths: DataPaths, projectRoot?: string) => string;
  /** What a missing or empty file means; the loaded value is then the schema's defaults. */
  whenMissing: string;
}

function spec<S extends z.ZodType>(entry: ConfigFileSpec<S>): ConfigFileSpec<S> {
  return entry;
}

export const CONFIG_FILES = {
  llm_router: spec({
    id: "llm_router",
    fileName: "llm_router.yaml",
    format: "yaml",
    schema: llmRouterSchema,
    locate: (paths, projectRoot) => locateRouterFile(paths, projectRoot).path,
    whenMissing: "no providers and no routes: every task uses the built-in default (embedded model, then core)",
  }),
  tools_policy: spec({
    id: "tools_policy",
    fileName: "tools_policy.yaml",
    format: "yaml",
    schema: toolsPolicySchema,
    locate: (paths) => paths.toolsPolicy,
    whenMissing:
      "deny by default: no paths, commands, web, devices or browser (`assistant doctor --fix` writes a starter)",
  }),
  agent_profile: spec({
    id: "agent_profile",
    fileName: "agent_profile.json",
    format: "json",
    schema: agentProfileSchema,
    locate: (paths) => paths.agentProfile,
    whenMissing: "the default profile",
  }),
  autonomous_mission: spec({
    id: "autonomous_mission",
    fileName: "autonomous_mission.yaml",
    format: "yaml",
    schema: autonomousMissionSchema,
    locate: (paths) => paths.mission,
    whenMissing: "no mission (disabled)",
  }),
  voice_router: spec({
    id: "voice_router",
    fileName: "voice_router.yaml",
    format: "yaml",
    schema: voiceRouterSchema,
    locate: (paths) => paths.voiceRouter,
    whenMissing: "no speech services configured (voice off)",
  }),
};

export type ConfigId = keyof typeof CONFIG_FILES;
export type ConfigValue<Id extends ConfigId> = z.output<(typeof CONFIG_FILES)[Id]["schema"]>;
export const CONFIG_IDS = Object.keys(CONFIG_FILES) as ConfigId[];

export interface LoadOptions {
  /** Second place the router file is looked up in (docs/configuration.md); default the working directory. */
  projectRoot?: string;
}

export function configFilePath(id: ConfigId, paths: DataPaths, options: LoadOptions = {}): string {
  return CONFIG_FILES[id].locate(paths, options.projectRoot);
}

/**
 * Loads and validates one config file. A missing or empty file gives the documented default (`whenMissing`);
 * anything else that does not validate throws a ConfigError naming the file path, the key path and the reason.
 */
export function loadConfig<Id extends ConfigId>(id: Id, paths: DataPaths, options: LoadOptions = {}): ConfigValue<Id> {
  const entry: ConfigFileSpec = CONFIG_FILES[id];
  const file = entry.locate(paths, options.projectRoot);
  const raw = parseConfigText(entry.format, readConfigText(file) ?? "", file);
  return validateConfigValue(entry.schema, raw, file) as ConfigValue<Id>;
}

/** Parses the text of a config file; blank text (or YAML with only comments) is null = the defaults. */
export function parseConfigText(format: "yaml" | "json", text: string, file: string): unknown {
  if (format === "yaml") return yamlDocumentValue(parseYaml(text, file), file);
  if (text.trim() === "") return null;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw jsonSyntaxError(text, file, error as Error);
  }
}

function jsonSyntaxError(text: string, file: string, error: Error): ConfigError {
  const reason = error.message.replace(/ in JSON at position \d+.*$/, "").replace(/ \(line \d+ column \d+\)$/, "");
  const position = /at position (\d+)/.exec(error.message);
  if (!position) return new ConfigError(file, "", `JSON syntax error: ${reason}`);
  const before = text.slice(0, Number(position[1]));
  const line = before.split("\n").length;
  const column = before.length - before.lastIndexOf("\n");
  return new ConfigError(file, `line ${line}, column ${column}`, `JSON syntax error: ${reason}`);
}

export type ConfigFileStatus = "ok" | "missing" | "invalid";

export interface ConfigFileReport {
  id: string;
  file: string;
  status: ConfigFileStatus;
  error?: { key: string; reason: string };
}

/**
 * Checks every config file without stopping at the first bad one (`assistant config validate`, doctor).
 * The env files are included: they are config too, and a malformed line there stops the daemon as well.
 */
export function validateConfigFiles(paths: DataPaths, options: LoadOptions = {}): ConfigFileReport[] {
  const reports: ConfigFileReport[] = [];
  for (const id of CONFIG_IDS) {
    const file = configFilePath(id, paths, options);
    reports.push(check(id, file, () => loadConfig(id, paths, options)));
  }
  reports.push(check("assistant_env", paths.assistantEnv, () => readEnvFile(paths.assistantEnv)));
  reports.push(check("connectors_env", paths.connectorsEnv, () => readEnvFile(paths.connectorsEnv)));
  return reports;
}

function check(id: string, file: string, load: () => unknown): ConfigFileReport {
  try {
    if (readConfigText(file) === undefined) return { id, file, status: "missing" };
    load();
    return { id, file, status: "ok" };
  } catch (error) {
    if (error instanceof ConfigError)
      return { id, file, status: "invalid", error: { key: error.key, reason: error.reason } };
    throw error;
  }
}
