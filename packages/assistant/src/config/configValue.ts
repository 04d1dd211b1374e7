import type * as z from "zod";
import { ConfigError } from "../util/errors.ts";

// Turns a parsed config document (YAML or JSON) into a typed value, or into one ConfigError that names the file,
// the dotted key path and a reason a person can act on. Shared by the loaders and by the YAML editor, which
// validates before it writes.

export type KeyPath = readonly PropertyKey[];

/** `task_types.conversation.fallback[0].provider`; keys that are not plain words are quoted: `model_options["qwen2.5:7b"]`. */
export function formatKeyPath(path: KeyPath): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (typeof segment === "string" && /^[A-Za-z_][A-Za-z0-9_-]*$/.test(segment))
      out += out ? `.${segment}` : segment;
    else out += `[${JSON.stringify(String(segment))}]`;
  }
  return out;
}

/**
 * YAML users write `key:` with nothing after it to mean "not set" (an empty list, the default). Map values that
 * are null are therefore dropped before validation; nulls inside lists stay and are reported.
 */
export function dropNullValues(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropNullValues);
  if (value !== null && typeof value === "object" && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value))
      if (item !== null && item !== undefined) out[key] = dropNullValues(item);
    return out;
  }
  return value;
}

/** Validates `raw` (null or undefined = an empty document) against `schema`; throws ConfigError on the first problem. */
export function validateConfigValue<S extends z.ZodType>(schema: S, raw: unknown, file: string): z.output<S> {
  // reportInput lets the reasons say "required" vs "got a list"; inputs are never copied into messages verbatim
  // except short enum values, so a secret pasted in the wrong place does not end up in a log.
  const result = schema.safeParse(dropNullValues(raw ?? {}), { reportInput: true });
  if (result.success) return result.data;
  throw configErrorFromIssues(file, result.error.issues);
}

export function configErrorFromIssues(file: string, issues: readonly z.core.$ZodIssue[]): ConfigError {
  const first = issues[0];
  if (!first) return new ConfigError(file, "", "invalid content");
  const { key, reason } = describeIssue(first);
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? "s" : ""})` : "";
  return new ConfigError(file, key, reason + more);
}

export function describeIssue(issue: z.core.$ZodIssue): { key: string; reason: string } {
  const key = formatKeyPath(issue.path);
  switch (issue.code) {
    case "unrecognized_keys": {
      // Point at the unknown key itself when there is one, so the message reads like the other errors.
      if (issue.keys.length === 1)
        return { key: formatKeyPath([...issue.path, issue.keys[0]!]), reason: "unknown key" };
      return { key, reason: `unknown keys ${issue.keys.map((k) => `"${k}"`).join(", ")}` };
    }
    case "invalid_type":
      return {
        key,
        reason: issue.input === undefined ? "required" : `expected ${issue.expected}, got ${typeName(issue.input)}`,
      };
    case "invalid_value": {
      const got =
        typeof issue.input === "string" && issue.input.length <= 64 ? `"${issue.input}" is not allowed; ` : "";
      return { key, reason: `${got}expected one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}` };
    }
    default:
      return { key, reason: issue.message };
  }
}

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  return typeof value;
}
