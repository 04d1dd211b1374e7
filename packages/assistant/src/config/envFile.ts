import { existsSync, readFileSync } from "node:fs";
import { basename } from "node:path";
import { writeFileAtomic } from "../util/atomicWrite.ts";
import { ConfigError } from "../util/errors.ts";
import type { DataPaths } from "./paths.ts";

// The `KEY=value` files of the data directory (assistant.env, connectors.env): one entry a line, spaces around
// `=` tolerated, `#` comments, optional `export `, single quotes literal, double quotes with \n \" \\ escapes.

const KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;
const LINE = /^\s*(?:export\s+)?([^=\s]+)\s*=\s*(.*?)\s*$/;

export interface EnvEntry {
  key: string;
  value: string;
  line: number;
}

export function isEnvKey(key: string): boolean {
  return KEY.test(key);
}

/** Parses env-file text; a malformed line is a ConfigError naming the file and line. */
export function parseEnv(text: string, file = "env file"): EnvEntry[] {
  const entries: EnvEntry[] = [];
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  lines.forEach((raw, index) => {
    const trimmed = raw.trim();
    if (trimmed === "" || trimmed.startsWith("#")) return;
    const match = LINE.exec(raw);
    const where = `line ${index + 1}`;
    if (!match) throw new ConfigError(file, where, "expected KEY=value");
    const key = match[1]!;
    if (!KEY.test(key))
      throw new ConfigError(file, where, `"${key}" is not a valid variable name (letters, digits, _)`);
    entries.push({ key, value: parseValue(match[2]!, file, where), line: index + 1 });
  });
  return entries;
}

function parseValue(raw: string, file: string, where: string): string {
  const quote = raw[0];
  if (quote === "'" || quote === '"') {
    const end = raw.indexOf(quote, 1);
    let close = end;
    if (quote === '"') {
      // find the first unescaped closing quote
      close = -1;
      for (let i = 1; i < raw.length; i++) {
        if (raw[i] === "\\") i++;
        else if (raw[i] === '"') {
          close = i;
          break;
        }
      }
    }
    if (close < 0) throw new ConfigError(file, where, `unterminated ${quote} quote`);
    const rest = raw.slice(close + 1).trim();
    if (rest !== "" && !rest.startsWith("#"))
      throw new ConfigError(file, where, "unexpected text after the closing quote");
    const body = raw.slice(1, close);
    return quote === "'" ? body : body.replace(/\\([nrt"\\])/g, (_, c: string) => ESCAPES[c] ?? c);
  }
  const comment = raw.search(/\s#/);
  return (comment >= 0 ? raw.slice(0, comment) : raw).trim();
}

const ESCAPES: Record<string, string> = { n: "\n", r: "\r", t: "\t", '"': '"', "\\": "\\" };

function formatValue(value: string): string {
  if (value === "" || /^[A-Za-z0-9_./:@,+-]+$/.test(value)) return value;
  return `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n").replace(/\r/g, "\\r").replace(/\t/g, "\\t")}"`;
}

/** Returns the text with `key` set (the last existing line for the key replaced in place, else appended). */
export function setEnvText(text: string, key: string, value: string): string {
  if (!KEY.test(key)) throw new ConfigError("env file", key, "not a valid variable name (letters, digits, _)");
  const lines = text === "" ? [] : text.split(/\r?\n/);
  if (lines.at(-1) === "") lines.pop();
  const entryLine = `${key}=${formatValue(value)}`;
  let replaced = false;
  for (let i = lines.length - 1; i >= 0 && !replaced; i--) {
    const match = LINE.exec(lines[i]!);
    if (match && match[1] === key && !lines[i]!.trim().startsWith("#")) {
      lines[i] = entryLine;
      replaced = true;
    }
  }
  if (!replaced) lines.push(entryLine);
  return `${lines.join("\n")}\n`;
}

/** The text without the lines that set `key` (comments and other lines kept); the same text when none does. */
export function unsetEnvText(text: string, key: string): string {
  const lines = text.split(/\r?\n/);
  const kept = lines.filter((line) => {
    const match = LINE.exec(line);
    return !(match && match[1] === key && !line.trim().startsWith("#"));
  });
  return kept.length === lines.length ? text : kept.join(text.includes("\r\n") ? "\r\n" : "\n");
}

/** Removes `key` from the env file at `path`; false when the file does not set it. */
export function removeEnvValue(path: string, key: string): boolean {
  if (!existsSync(path)) return false;
  const text = readFileSync(path, "utf8");
  parseEnv(text, basename(path)); // refuse to rewrite a file we cannot read back
  const next = unsetEnvText(text, key);
  if (next === text) return false;
  writeFileAtomic(path, next, 0o600);
  return true;
}

export function readEnvFile(path: string): EnvEntry[] {
  if (!existsSync(path)) return [];
  return parseEnv(readFileSync(path, "utf8"), basename(path));
}

export function writeEnvValue(path: string, key: string, value: string): void {
  const text = existsSync(path) ? readFileSync(path, "utf8") : "";
  parseEnv(text, basename(path)); // refuse to rewrite a file we cannot read back
  writeFileAtomic(path, setEnvText(text, key, value), 0o600);
}

/**
 * The variables the env files define, merged: connectors.env, then assistant.env over it.
 * The process environment wins over both (see `applyEnvFiles`).
 */
export function readEnvFiles(paths: DataPaths): Map<string, { value: string; source: string }> {
  const merged = new Map<string, { value: string; source: string }>();
  for (const file of [paths.connectorsEnv, paths.assistantEnv]) {
    for (const entry of readEnvFile(file)) merged.set(entry.key, { value: entry.value, source: basename(file) });
  }
  return merged;
}

/** Loads the env files into `env` without overriding variables the process already has. */
export function applyEnvFiles(paths: DataPaths, env: NodeJS.ProcessEnv = process.env): void {
  for (const [key, { value }] of readEnvFiles(paths)) {
    if (env[key] === undefined) env[key] = value;
  }
}

/** Secrets belong in the vault (docs/security.md#secrets-the-vault), never in the plaintext env files. */
export function looksLikeSecret(key: string): boolean {
  return /(API_KEY|_TOKEN|SECRET|PASSWORD|MASTER_KEY|PRIVATE_KEY)$/i.test(key);
}

/**
 * The environment the daemon runs with: the env files of the data dir, the process environment winning.
 * Lenient: a malformed env file is reported by `doctor` and `config validate`, so callers still run.
 */
export function effectiveEnv(paths: DataPaths, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  try {
    const fromFiles = Object.fromEntries([...readEnvFiles(paths)].map(([key, { value }]) => [key, value]));
    return { ...fromFiles, ...env };
  } catch {
    return env;
  }
}
