import { z } from "zod";
import { listTimeline, TIMELINE_CATEGORIES, type TimelineCategory } from "../../events/timeline.ts";
import type { Services } from "../../runtime/services.ts";
import { timelineItemSchema } from "../eventSchemas.ts";
import { pageQuerySchema, pageSchema, sinceSchema } from "../pagination.ts";
import { defineRoute, type RouteSpec } from "../route.ts";

// GET /api/timeline (docs/memory.md#timeline): task, schedule, mission, memory and budget events merged, newest
// first, for the Calendar and Data views.

const categories = Object.keys(TIMELINE_CATEGORIES) as [TimelineCategory, ...TimelineCategory[]];

const timelineQuery = pageQuerySchema.extend({
  since: sinceSchema,
  category: z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined) return undefined;
      const list = value.split(",").map((c) => c.trim());
      const unknown = list.filter((c) => !(categories as string[]).includes(c));
      if (unknown.length > 0) {
        ctx.addIssue({
          code: "custom",
          message: `unknown category ${unknown.join(", ")}; use ${categories.join(", ")}`,
        });
        return z.NEVER;
      }
      return list as TimelineCategory[];
    }),
});

export function timelineRoutes(services: Services): RouteSpec[] {
  return [
    defineRoute({
      method: "GET",
      url: "/api/timeline",
      operationId: "listTimeline",
      summary:
        "Task, schedule, mission, memory and budget events, newest first (limit, cursor, since RFC 3339, category list)",
      tag: "timeline",
      query: timelineQuery,
      response: pageSchema(timelineItemSchema),
      handler: ({ query }) =>
        listTimeline(services.db, {
          limit: query.limit,
          ...(query.since !== undefined ? { sinceMs: query.since } : {}),
          ...(query.cursor ? { cursor: query.cursor } : {}),
          ...(query.category ? { categories: query.category } : {}),
        }),
    }),
  ];
}
