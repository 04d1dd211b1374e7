import { ConfigError } from "../util/errors.ts";
import { type EnvType, EnvValueError } from "./envTypes.ts";
import { ENV_VARIABLES, type EnvVariableSpec, SETTING_KEYS, type SettingKey } from "./envVariables.ts";

// The environment variables of the registry (envVariables.ts), parsed. The daemon reads them all once at start
// (after the env files are applied) and refuses to start on a bad value; a CLI command parses only the ones it
// uses, with the same messages.

type Registry = typeof ENV_VARIABLES;
type ValueOf<E> = E extends EnvVariableSpec<infer T, infer D> ? (undefined extends D ? T | undefined : T) : never;
/** Variables a domain reads itself (secrets, the data directory) are not part of the settings. */
type ParsedKey = { [K in SettingKey]: Registry[K] extends { readBy: string } ? never : K }[SettingKey];

/** Runtime settings the daemon reads from its environment, one field per registry entry. */
export type DaemonSettings = { [K in ParsedKey]: ValueOf<Registry[K]> };

export const DEFAULT_PORT = ENV_VARIABLES.port.default;
const ENV = "environment";
const PARSED_KEYS = SETTING_KEYS.filter((key) => ENV_VARIABLES[key].readBy === undefined) as ParsedKey[];

/** Every setting; a bad value throws a ConfigError naming the variable (every bad variable when several are). */
export function readSettings(env: NodeJS.ProcessEnv = process.env): DaemonSettings {
  return readSettingsOf(env, PARSED_KEYS);
}

/** The settings named by `keys` only (a CLI command that reads a few), with the same checks and messages. */
export function readSettingsOf<K extends ParsedKey>(
  env: NodeJS.ProcessEnv,
  keys: readonly K[],
): Pick<DaemonSettings, K> {
  const settings: Record<string, unknown> = {};
  const problems: ConfigError[] = [];
  for (const key of keys) {
    try {
      settings[key] = parseVariable(ENV_VARIABLES[key] as EnvVariableSpec, env[ENV_VARIABLES[key].name]);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(error);
    }
  }
  if (problems.length === 1) throw problems[0];
  if (problems.length > 1) {
    const lines = problems.map((p) => `${p.key}: ${p.reason}`);
    throw new ConfigError(ENV, problems[0]!.key, `${problems[0]!.reason}\n  ${lines.slice(1).join("\n  ")}`);
  }
  return settings as Pick<DaemonSettings, K>;
}

/** One variable's value: its default when unset or blank, else the parsed text; a ConfigError when not allowed. */
export function parseVariable<T>(spec: EnvVariableSpec<T>, raw: string | undefined): T | undefined {
  const text = raw?.trim();
  if (!text) return spec.default;
  try {
    return spec.type.parse(text);
  } catch (error) {
    if (!(error instanceof EnvValueError)) throw error;
    throw new ConfigError(ENV, spec.name, reason(spec.type, text, error));
  }
}

function reason(type: EnvType<unknown>, text: string, error: EnvValueError): string {
  const detail = error.detail ? `: ${error.detail}` : "";
  const got = type.quote ? ` (got ${JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}...` : text)})` : "";
  return `must be ${type.allowed}${detail}${got}`;
}
