import { basename } from "node:path";
import { closestMatch } from "../util/closestMatch.ts";
import { readEnvFile } from "./envFile.ts";
import { ENV_VARIABLES, PLANNED_ENV_VARIABLES } from "./envVariables.ts";
import type { DataPaths } from "./paths.ts";

// `ASSISTANT_*` names in the env files that no version of the assistant reads: almost always a typo
// (a misspelt ASSISTANT_PORT), which would otherwise be ignored without a word. `config validate` and doctor warn.

const PREFIX = "ASSISTANT_";

/** Every name the registry declares: the settings of this version and the ones reserved for features to come. */
export const KNOWN_ENV_NAMES: readonly string[] = [
  ...Object.values(ENV_VARIABLES).map((spec) => spec.name),
  ...PLANNED_ENV_VARIABLES.map((planned) => planned.name),
];

export interface UnknownEnvName {
  key: string;
  file: string;
  line: number;
  /** The registered name closest to it, when one is close. */
  suggestion?: string;
}

/** The unknown `ASSISTANT_*` names of assistant.env and connectors.env (a malformed file throws its ConfigError). */
export function unknownEnvNames(paths: Pick<DataPaths, "assistantEnv" | "connectorsEnv">): UnknownEnvName[] {
  const found: UnknownEnvName[] = [];
  for (const file of [paths.assistantEnv, paths.connectorsEnv]) {
    for (const entry of readEnvFile(file)) {
      if (!entry.key.startsWith(PREFIX) || KNOWN_ENV_NAMES.includes(entry.key)) continue;
      const suggestion = closestMatch(entry.key, KNOWN_ENV_NAMES);
      found.push({ key: entry.key, file: basename(file), line: entry.line, ...(suggestion ? { suggestion } : {}) });
    }
  }
  return found;
}

/** One sentence per unknown name, with the close match and the command that removes it. */
export function describeUnknownEnvName(name: UnknownEnvName): string {
  const hint = name.suggestion ? ` (did you mean ${name.suggestion}?)` : "";
  return `${name.file} line ${name.line}: ${name.key} is not a variable of the assistant${hint}; nothing reads it (remove it with \`assistant config env unset ${name.key}\`)`;
}
