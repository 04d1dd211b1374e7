import { isEnvKey, looksLikeSecret, readEnvFiles, writeEnvValue } from "../config/envFile.ts";
import type { DataPaths } from "../config/paths.ts";
import { readSettings } from "../config/settings.ts";
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
