import { appendFileSync, existsSync, mkdirSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { redact } from "../util/redact.ts";

// A small leveled logger for the daemon: one line per record, appended to logs/daemon.log (and mirrored to
// stderr in the foreground), rotated by size. Every line passes the secret redaction filter before it is written.

export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Logger {
  trace(message: string, fields?: Record<string, unknown>): void;
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  enabled(level: LogLevel): boolean;
}

export interface LoggerOptions {
  level: LogLevel;
  file?: string;
  mirror?: NodeJS.WritableStream;
  maxBytes?: number;
  keep?: number;
}

export function createLogger(options: LoggerOptions): Logger {
  const threshold = LOG_LEVELS.indexOf(options.level);
  const maxBytes = options.maxBytes ?? 5 * 1024 * 1024;
  const keep = options.keep ?? 3;
  let size = options.file && existsSync(options.file) ? statSync(options.file).size : 0;
  if (options.file) mkdirSync(dirname(options.file), { recursive: true, mode: 0o700 });

  function rotate(file: string): void {
    rmSync(`${file}.${keep}`, { force: true });
    for (let i = keep - 1; i >= 1; i--) if (existsSync(`${file}.${i}`)) renameSync(`${file}.${i}`, `${file}.${i + 1}`);
    renameSync(file, `${file}.1`);
    size = 0;
  }

  function write(level: LogLevel, message: string, fields?: Record<string, unknown>): void {
    if (LOG_LEVELS.indexOf(level) < threshold) return;
    const extra = fields && Object.keys(fields).length > 0 ? ` ${safeJson(fields)}` : "";
    const line = redact(`${new Date().toISOString()} ${level.toUpperCase().padEnd(5)} ${message}${extra}`) + "\n";
    options.mirror?.write(line);
    if (!options.file) return;
    if (size + line.length > maxBytes && size > 0) rotate(options.file);
    appendFileSync(options.file, line, { mode: 0o600 });
    size += Buffer.byteLength(line);
  }

  return {
    trace: (m, f) => write("trace", m, f),
    debug: (m, f) => write("debug", m, f),
    info: (m, f) => write("info", m, f),
    warn: (m, f) => write("warn", m, f),
    error: (m, f) => write("error", m, f),
    enabled: (level) => LOG_LEVELS.indexOf(level) >= threshold,
  };
}

function safeJson(fields: Record<string, unknown>): string {
  try {
    return JSON.stringify(fields, (_k, v) => (v instanceof Error ? { name: v.name, message: v.message } : v));
  } catch {
    return "[unserialisable fields]";
  }
}
