import { defaultText } from "../config/envDocs.ts";
import { isEnvKey, looksLikeSecret, readEnvFiles, removeEnvValue, writeEnvValue } from "../config/envFile.ts";
import { KNOWN_ENV_NAMES } from "../config/envNames.ts";
import { ENV_GROUPS, ENV_VARIABLES, type EnvVariableSpec, PLANNED_ENV_VARIABLES } from "../config/envVariables.ts";
import type { DataPaths } from "../config/paths.ts";
import { parseVariable, readSettings } from "../config/settings.ts";
import { didYouMean } from "../util/closestMatch.ts";
import { AppError, ConfigError } from "../util/errors.ts";
import { MASTER_KEY_ENV } from "../vault/keySource.ts";
import { ensureDataDir } from "./dataDir.ts";

// The persistent variables of assistant.env and connectors.env, as `assistant config env` and `/config` see
// them. Secrets never belong here (docs/security.md#secrets-the-vault): setting one is refused with a pointer to the
// vault, and a secret-looking value someone put there by hand is masked when listed.

export const MASKED = "********";

export interface EnvSetting {
  key: string;
  /** The value, or MASKED when the key looks like a secret. */
  value: string;
  /** The file the value comes from (assistant.env wins over connectors.env). */
  source: string;
  secret: boolean;
}

export function listEnvSettings(paths: DataPaths): EnvSetting[] {
  return [...readEnvFiles(paths)]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, { value, source }]) => {
      const secret = looksLikeSecret(key);
      return { key, value: secret ? MASKED : value, source, secret };
    });
}

/** Where the value in force comes from; `default` and `unset` when no one set it (or set it blank). */
export type EnvSource = "environment" | "assistant.env" | "connectors.env" | "default" | "unset";

/** One line of `assistant config env list`: a variable of the registry, a reserved one, or one nothing reads. */
export interface EnvVariableView {
  key: string;
  /** The value in force (MASKED for a secret), else the default when it is a fixed value, else null. */
  value: string | null;
  source: EnvSource;
  secret: boolean;
  /** setting: read by this version; planned: reserved for a feature to come; unknown: set, read by nothing. */
  kind: "setting" | "planned" | "unknown";
  default: string | null;
  allowed: string | null;
  meaning: string | null;
  /** The domain that reads it, and its page. */
  domain: string | null;
  doc: string | null;
  /** Why the daemon would refuse the value (it does not start with it). */
  problem: string | null;
}

/**
 * Every variable of the registry with the value in force and where it comes from (`env` wins over assistant.env,
 * which wins over connectors.env), then reserved and unknown variables that are set. Reads the env files, so a
 * malformed one throws its ConfigError.
 */
export function listEnvVariables(paths: DataPaths, env: NodeJS.ProcessEnv): EnvVariableView[] {
  const files = readEnvFiles(paths);
  const found = (key: string): { raw: string; source: EnvSource } | undefined => {
    const fromEnv = env[key];
    if (fromEnv !== undefined) return { raw: fromEnv, source: "environment" };
    const fromFile = files.get(key);
    return fromFile && { raw: fromFile.value, source: fromFile.source as EnvSource };
  };
  const views: EnvVariableView[] = [];
  for (const spec of Object.values(ENV_VARIABLES) as EnvVariableSpec[]) {
    const set = found(spec.name);
    const secret = spec.type.kind === "secret";
    const given = set && set.raw.trim() !== "" ? set : undefined;
    const words = defaultText(spec).replaceAll("`", "") || null; // the backticks are for the docs
    views.push({
      key: spec.name,
      value: given ? (secret ? MASKED : given.raw) : spec.default === undefined ? null : spec.type.show(spec.default),
      source: given ? given.source : words ? "default" : "unset",
      secret,
      kind: "setting",
      default: words,
      allowed: spec.type.allowed,
      meaning: spec.meaning,
      domain: spec.group,
      doc: ENV_GROUPS[spec.group].doc,
      problem: given && !spec.readBy ? problemOf(spec, given.raw) : null,
    });
  }
  const known = new Set(views.map((view) => view.key));
  for (const planned of PLANNED_ENV_VARIABLES) {
    const set = found(planned.name);
    if (!set) continue;
    known.add(planned.name);
    views.push({
      key: planned.name,
      value: set.raw,
      source: set.source,
      secret: false,
      kind: "planned",
      default: null,
      allowed: null,
      meaning: `${planned.meaning} (${planned.feature}: not read by this version)`,
      domain: null,
      doc: null,
      problem: null,
    });
  }
  for (const [key, { value, source }] of [...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (known.has(key)) continue;
    const secret = looksLikeSecret(key);
    views.push({
      key,
      value: secret ? MASKED : value,
      source: source as EnvSource,
      secret,
      kind: "unknown",
      default: null,
      allowed: null,
      meaning: null,
      domain: null,
      doc: null,
      problem: null,
    });
  }
  return views;
}

function problemOf(spec: EnvVariableSpec, raw: string): string | null {
  try {
    parseVariable(spec, raw);
    return null;
  } catch (error) {
    if (error instanceof ConfigError) return error.reason;
    throw error;
  }
}

export function getEnvSetting(paths: DataPaths, key: string): EnvSetting | undefined {
  assertSettableKey(key, false);
  return listEnvSettings(paths).find((setting) => setting.key === key);
}

/** Writes `key=value` to assistant.env (atomically, keeping the other lines and comments). */
export function setEnvSetting(paths: DataPaths, key: string, value: string): { file: string } {
  assertSettableKey(key, true);
  if (value.includes("\0"))
    throw new AppError("invalid_request", `${key}: the value contains a NUL character`, { field: "value" });
  checkKnownSetting(key, value);
  ensureDataDir(paths.dataDir);
  writeEnvValue(paths.assistantEnv, key, value);
  return { file: paths.assistantEnv };
}

/** Removes a variable from assistant.env and connectors.env; the files it was in (not_found when in none). */
export function unsetEnvSetting(paths: DataPaths, key: string): { files: string[] } {
  assertSettableKey(key, false);
  const files = [paths.assistantEnv, paths.connectorsEnv].filter((file) => removeEnvValue(file, key));
  if (files.length === 0) {
    throw new AppError(
      "not_found",
      `${key} is not set in assistant.env or connectors.env${didYouMean(key, [...readEnvFiles(paths).keys()])}`,
      {
        field: "key",
      },
    );
  }
  return { files };
}

/** Refuses names that are not variables and, for writing, secrets and settings that cannot live in assistant.env. */
export function assertSettableKey(key: string, forWriting: boolean): void {
  if (!isEnvKey(key)) {
    const shown = key.length > 64 ? `${key.slice(0, 64)}...` : key;
    throw new AppError(
      "invalid_request",
      `invalid variable name ${JSON.stringify(shown)}: use letters, digits and _, not starting with a digit (for example ASSISTANT_PORT)`,
      { field: "key" },
    );
  }
  if (!forWriting) return;
  if (key === MASTER_KEY_ENV) {
    throw new AppError(
      "invalid_request",
      `${MASTER_KEY_ENV} must not be written into a file next to the vault it protects; set it in the daemon's environment (shell profile or service manager)`,
      { field: "key" },
    );
  }
  if (looksLikeSecret(key)) {
    throw new AppError(
      "invalid_request",
      `${key} looks like a secret; secrets go into the encrypted vault, not into assistant.env: run \`assistant vault set ${key.toLowerCase()}\``,
      { field: "key" },
    );
  }
  if (key.startsWith("ASSISTANT_") && !KNOWN_ENV_NAMES.includes(key)) {
    throw new AppError(
      "invalid_request",
      `${key} is not a variable of the assistant${didYouMean(key, KNOWN_ENV_NAMES)}; \`assistant config env list\` lists them`,
      { field: "key" },
    );
  }
  if (key === "ASSISTANT_DATA_DIR") {
    throw new AppError(
      "invalid_request",
      "ASSISTANT_DATA_DIR cannot be set in assistant.env, which lives inside the data directory; set it in your shell",
      { field: "key" },
    );
  }
}

/** Values the daemon parses at start (port, bind, log level...) are checked now, not at the next restart. */
function checkKnownSetting(key: string, value: string): void {
  try {
    readSettings({ [key]: value });
  } catch (error) {
    if (error instanceof ConfigError)
      throw new AppError("invalid_request", `${key}: ${error.reason}`, { field: "value" });
    throw error;
  }
}
