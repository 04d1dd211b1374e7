import type { z } from "zod";

// Small JSON files a user or a third party writes (plugin.json, skill.json): parsed and checked against a schema,
// with one message that names the file and the failing field.

export function parseJsonWith<S extends z.ZodType>(schema: S, text: string, label: string): z.output<S> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`${label} is not valid JSON: ${(error as Error).message}`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`${label}: ${issue.path.join(".") || "(root)"}: ${issue.message}`);
  }
  return parsed.data;
}
