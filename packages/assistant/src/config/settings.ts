import { isIP } from "node:net";
import { type LogLevel, parseLogLevel } from "../log/logger.ts";
import { ConfigError } from "../util/errors.ts";

/** Runtime settings the daemon reads from its environment (after the env files are applied). */
export interface DaemonSettings {
  port: number;
  bind: string;
  logLevel: LogLevel;
  maxBodyBytes: number;
  allowedHosts: string[];
  studioPort: number;
}

export const DEFAULT_PORT = 3876;
const ENV = "environment";

function intSetting(env: NodeJS.ProcessEnv, key: string, fallback: number, min: number, max: number): number {
  const raw = env[key]?.trim();
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(ENV, key, `must be a whole number from ${min} to ${max} (got "${raw}")`);
  }
  return Number(raw);
}

export function readSettings(env: NodeJS.ProcessEnv = process.env): DaemonSettings {
  const bind = env.ASSISTANT_BIND?.trim() || "127.0.0.1";
  if (isIP(bind) === 0 && bind !== "localhost") {
    throw new ConfigError(ENV, "ASSISTANT_BIND", `must be an IP address such as 127.0.0.1 or 0.0.0.0 (got "${bind}")`);
  }
  const rawLevel = env.ASSISTANT_LOG?.trim();
  const logLevel = rawLevel ? parseLogLevel(rawLevel) : "info";
  if (!logLevel)
    throw new ConfigError(ENV, "ASSISTANT_LOG", `must be one of trace, debug, info, warn, error (got "${rawLevel}")`);
  return {
    port: intSetting(env, "ASSISTANT_PORT", DEFAULT_PORT, 0, 65535),
    bind,
    logLevel,
    maxBodyBytes: intSetting(env, "ASSISTANT_MAX_BODY_BYTES", 1024 * 1024, 1024, 1024 * 1024 * 1024),
    allowedHosts: (env.ASSISTANT_ALLOWED_HOSTS ?? "")
      .split(",")
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean),
    studioPort: intSetting(env, "ASSISTANT_STUDIO_PORT", 5178, 1, 65535),
  };
}
