import { z } from "zod";
import { EVENT_KINDS, type EventKind, isEventKind } from "../../events/registry.ts";
import type { Services } from "../../runtime/services.ts";
import { eventMessageSchema } from "../eventSchemas.ts";
import { defineRoute, type RouteSpec } from "../route.ts";
import { resumePoint, streamEvents } from "../sse.ts";

const kindsParam = z
  .string()
  .max(2000)
  .optional()
  .transform((value, ctx) => {
    if (!value) return undefined;
    const kinds = value.split(",").map((k) => k.trim());
    const unknown = kinds.filter((k) => !isEventKind(k));
    if (unknown.length > 0) {
      ctx.addIssue({
        code: "custom",
        message: `unknown event kind ${unknown.join(", ")}; known: ${Object.keys(EVENT_KINDS).join(", ")}`,
      });
      return z.NEVER;
    }
    return kinds as EventKind[];
  });

const eventsQuery = z.object({
  kinds: kindsParam,
  last_event_id: z.coerce.number().int().min(0).optional(),
});

export function eventRoutes(services: Services): RouteSpec[] {
  return [
    defineRoute({
      method: "GET",
      url: "/api/events",
      operationId: "streamEvents",
      summary: "Server-sent event stream of every event; resumes after Last-Event-ID",
      tag: "events",
      query: eventsQuery,
      raw: {
        200: {
          description: "the events missed after Last-Event-ID (or last_event_id), then live ones",
          contentType: "text/event-stream",
          schema: eventMessageSchema,
        },
      },
      handler: ({ query }, request, reply) => {
        const after = resumePoint(request.headers["last-event-id"], query.last_event_id);
        streamEvents(services.events, request, reply, query.kinds ? { kinds: query.kinds } : {}, after);
      },
    }),
  ];
}
