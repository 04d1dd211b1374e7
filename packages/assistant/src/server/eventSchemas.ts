import { z } from "zod";
import { EVENT_KINDS, type EventKind, storedEventSchema } from "../events/registry.ts";
import { TIMELINE_CATEGORIES, type TimelineCategory } from "../events/timeline.ts";

// The stored events as the OpenAPI document names them (events/registry.ts declares them): `StoredEvent`, one of
// `TaskCreatedEvent`, `ScheduleFiredEvent`... told apart by `kind`, the message of GET /api/events, and the
// timeline's items (events/timeline.ts picks and titles them).

function pascal(kind: string): string {
  return kind
    .split("_")
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join("");
}

type Option = (typeof storedEventSchema.options)[number];

export const namedStoredEventSchema = z
  .discriminatedUnion(
    "kind",
    storedEventSchema.options.map((option) => option.meta({ id: `${pascal(option.shape.kind.value)}Event` })) as [
      Option,
      ...Option[],
    ],
  )
  .meta({ id: "StoredEvent" });

/** One server-sent message of the event stream: `id` is the event's sequence number, `event` its kind. */
export const eventMessageSchema = z
  .object({
    id: z.string(),
    event: z.enum(Object.keys(EVENT_KINDS) as [EventKind, ...EventKind[]]),
    data: namedStoredEventSchema,
  })
  .meta({
    id: "EventMessage",
    description:
      "One server-sent event: `id: <sequence number>`, `event: <kind>`, `data: <the stored event as JSON>`. Resume with Last-Event-ID.",
  });

const timelineKinds = new Map<string, TimelineCategory>(
  Object.entries(TIMELINE_CATEGORIES).flatMap(([category, kinds]) =>
    kinds.map((kind) => [kind, category as TimelineCategory] as const),
  ),
);
const timelineOptions = storedEventSchema.options
  .filter((option) => timelineKinds.has(option.shape.kind.value))
  .map((option) =>
    option.extend({ category: z.literal(timelineKinds.get(option.shape.kind.value)!), title: z.string() }),
  );

/** An event of GET /api/timeline: the stored event with its category and a line a person can read. */
export const timelineItemSchema = z
  .discriminatedUnion("kind", timelineOptions as [(typeof timelineOptions)[number], ...typeof timelineOptions])
  .meta({ id: "TimelineItem" });
