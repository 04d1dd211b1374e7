import { errorBodySchema } from "./errors.ts";
import { declaredErrors, type RouteSpec, responseSchema } from "./route.ts";

// The answer check of test runs (registerRoutes.ts): a route's answer, as sent, must be one it declares. A
// success is parsed with its status's schema and must come back unchanged, so a field the schema does not
// declare is caught too (zod would strip it silently); an error must have the error shape and a declared code.

/** Where `parsed` (the schema's output) differs from `sent` (the JSON on the wire), or undefined. */
function difference(parsed: unknown, sent: unknown, path: string): string | undefined {
  if (Object.is(parsed, sent)) return undefined;
  if (Array.isArray(sent) && Array.isArray(parsed) && sent.length === parsed.length) {
    for (let i = 0; i < sent.length; i++) {
      const found = difference(parsed[i], sent[i], `${path}[${i}]`);
      if (found) return found;
    }
    return undefined;
  }
  if (isObject(sent) && isObject(parsed)) {
    for (const key of Object.keys(sent)) {
      const at = path ? `${path}.${key}` : key;
      if (!(key in parsed)) return `${at} is not in the schema`;
      const found = difference(parsed[key], sent[key], at);
      if (found) return found;
    }
    const added = Object.keys(parsed).find((key) => !(key in sent) && parsed[key] !== undefined);
    return added ? `${path ? `${path}.` : ""}${added} was added by the schema (a default?)` : undefined;
  }
  return `${path || "the body"} is changed by the schema (a transform?)`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function jsonOf(payload: unknown): { value: unknown } | undefined {
  if (typeof payload !== "string") return undefined;
  try {
    return { value: JSON.parse(payload) };
  } catch {
    return undefined;
  }
}

/** What is wrong with this answer of `route`, or undefined when it is one the route declares. */
export function answerProblem(route: RouteSpec, status: number, payload: unknown): string | undefined {
  if (route.raw?.[status]) return undefined;
  if (status >= 400) {
    const body = jsonOf(payload);
    const parsed = body && errorBodySchema.safeParse(body.value);
    if (!parsed?.success) return `the ${status} answer does not have the error shape`;
    const code = parsed.data.error.code;
    return declaredErrors(route).includes(code) ? undefined : `${status} ${code} is not among the route's errors`;
  }
  const schema = responseSchema(route, status);
  if (!schema) return `the route does not declare a ${status} answer`;
  const body = jsonOf(payload);
  if (!body) return `the ${status} answer is not JSON`;
  const result = schema.safeParse(body.value);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    return `${issue.path.map(String).join(".") || "the body"}: ${issue.message}`;
  }
  return difference(result.data, body.value, "");
}
