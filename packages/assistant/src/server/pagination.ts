import { z } from "zod";
import { decodeCursor, encodeCursor, type Page } from "../util/cursor.ts";
import { parseRfc3339 } from "../util/rfc3339.ts";

export { decodeCursor, encodeCursor, type Page };

// List conventions (docs/http-api.md#lists): `limit` (default 50, max 500) and an opaque `cursor`;
// responses are {items, next_cursor}.

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 500;

export const pageQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(MAX_LIMIT).default(DEFAULT_LIMIT),
  cursor: z.string().max(512).optional(),
});

/** `since`: an RFC 3339 timestamp, as epoch milliseconds; a bad one is a 400 naming the field. */
export const sinceSchema = z
  .string()
  .optional()
  .transform((value, ctx) => {
    if (value === undefined) return undefined;
    const ms = parseRfc3339(value);
    if (ms === null) {
      ctx.addIssue({ code: "custom", message: "expected an RFC 3339 timestamp such as 2026-01-31T09:00:00Z" });
      return z.NEVER;
    }
    return ms;
  });

/** One page of a list; a page of a named record is named after it (`TaskPage` for `Task`) in the OpenAPI document. */
export function pageSchema<T extends z.ZodType>(item: T) {
  const page = z.object({ items: z.array(item), next_cursor: z.string().nullable() });
  const name = z.globalRegistry.get(item)?.id;
  const description = "One page of a list: pass next_cursor back as cursor for the next page; null on the last";
  return name ? page.meta({ id: `${name}Page`, description }) : page;
}

/** Pages a list already sorted by `key`, resuming after the cursor's key. */
export function pageByKey<T>(sorted: T[], key: (item: T) => string, limit: number, cursor?: string): Page<T> {
  const after = decodeCursor(cursor);
  const start = after === undefined ? 0 : sorted.findIndex((item) => key(item) > String(after));
  const from = start < 0 ? sorted.length : start;
  const items = sorted.slice(from, from + limit);
  const more = from + limit < sorted.length;
  return { items, next_cursor: more && items.length > 0 ? encodeCursor(key(items.at(-1)!)) : null };
}
