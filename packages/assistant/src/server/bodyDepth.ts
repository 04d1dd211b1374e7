import { AppError } from "../util/errors.ts";

// How deeply a request body may nest arrays and objects. No route needs more than a handful of levels, while the
// YAML and config writers, zod and the event redaction all recurse: a body nested thousands deep overflowed their
// stacks (a 500). Bodies are checked when parsed, before any route code runs.

export const MAX_BODY_DEPTH = 64;

export function bodyTooDeep(): AppError {
  return new AppError("invalid_request", `the request body is nested more than ${MAX_BODY_DEPTH} levels deep`, {
    field: "body",
  });
}

/** Whether JSON text opens more than `limit` arrays or objects inside each other; one pass, strings skipped. */
export function jsonTooDeep(text: string, limit = MAX_BODY_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/**
 * Whether a parsed value nests more than `limit` arrays or objects. Iterative, so any depth is safe to walk; a
 * node shared through YAML aliases is walked again only when reached deeper, so alias fan-out and cycles end.
 */
export function valueTooDeep(value: unknown, limit = MAX_BODY_DEPTH): boolean {
  const deepest = new Map<object, number>();
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 1 }];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const node = item.value;
    if (node === null || typeof node !== "object") continue;
    if (item.depth > limit) return true;
    if ((deepest.get(node) ?? 0) >= item.depth) continue;
    deepest.set(node, item.depth);
    for (const child of Object.values(node)) stack.push({ value: child, depth: item.depth + 1 });
  }
  return false;
}
