import { z } from "zod";
import type { Services } from "../../runtime/services.ts";
import { buildCalendar, calendarSchema, parseCalendarRange } from "../../scheduler/calendar.ts";
import { defineRoute, type RouteSpec } from "../route.ts";

// GET /api/calendar (docs/scheduler.md#calendar): future fire times of schedules and of the mission heartbeat,
// past task runs and mission cycles, in a bounded range. Combines the scheduler and the mission (scheduler/calendar.ts).

const calendarQuery = z.object({
  from: z.string().max(64).optional(),
  to: z.string().max(64).optional(),
});

export function calendarRoutes(services: Services): RouteSpec[] {
  return [
    defineRoute({
      method: "GET",
      url: "/api/calendar",
      operationId: "getCalendar",
      summary:
        "Future schedule and mission heartbeat fire times and past task runs and mission cycles between from and to (dates or RFC 3339, at most 92 days)",
      tag: "schedules",
      query: calendarQuery,
      response: calendarSchema,
      handler: ({ query }) => {
        const { fromMs, toMs } = parseCalendarRange(query.from, query.to);
        return buildCalendar(services.db, {
          schedules: services.scheduler.active(),
          mission: services.mission.view(),
          fromMs,
          toMs,
          nowMs: Date.now(),
        });
      },
    }),
  ];
}
