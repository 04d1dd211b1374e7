import type { Db } from "../store/database.ts";
import type { Page } from "../util/cursor.ts";
import { plural } from "../util/plural.ts";
import { eventPage } from "./eventPage.ts";
import type { EventKind, StoredEvent } from "./registry.ts";

// The timeline of the UIs' Calendar and Data views: task, schedule, mission, memory and budget events merged in
// one list, newest first, each with its category and a line a person can read.

export const TIMELINE_CATEGORIES = {
  task: ["task_created", "task_state_changed"],
  schedule: [
    "schedule_created",
    "schedule_deleted",
    "schedule_fired",
    "schedule_skipped",
    "schedule_paused",
    "schedule_resumed",
  ],
  mission: [
    "mission_updated",
    "mission_state_changed",
    "mission_heartbeat",
    "mission_cycle_finished",
    "mission_report",
  ],
  memory: ["memory_learned", "memory_forgotten", "memory_cleared", "memory_settings_changed"],
  budget: ["budget_exhausted"],
} as const satisfies Record<string, readonly EventKind[]>;

export type TimelineCategory = keyof typeof TIMELINE_CATEGORIES;
type TimelineKind = (typeof TIMELINE_CATEGORIES)[TimelineCategory][number];

export type TimelineItem = StoredEvent<TimelineKind> & {
  category: TimelineCategory;
  title: string;
};

const CATEGORY_OF = new Map<EventKind, TimelineCategory>(
  Object.entries(TIMELINE_CATEGORIES).flatMap(([category, kinds]) =>
    kinds.map((kind) => [kind, category as TimelineCategory] as const),
  ),
);

export function listTimeline(
  db: Db,
  query: { limit: number; sinceMs?: number; cursor?: string; categories?: readonly TimelineCategory[] },
): Page<TimelineItem> {
  const categories = query.categories?.length
    ? query.categories
    : (Object.keys(TIMELINE_CATEGORIES) as TimelineCategory[]);
  const kinds = categories.flatMap((c) => TIMELINE_CATEGORIES[c]);
  const page = eventPage(db, { kinds }, query);
  return {
    items: page.items.map((event) => ({ ...event, category: CATEGORY_OF.get(event.kind)!, title: titleOf(event) })),
    next_cursor: page.next_cursor,
  };
}

function titleOf(event: StoredEvent<TimelineKind>): string {
  switch (event.kind) {
    case "task_created":
      return `Task created (${event.data.origin}): ${event.data.message_preview}`;
    case "task_state_changed":
      return `Task ${event.data.status}${event.data.reason ? `: ${event.data.reason}` : ""}`;
    case "schedule_created":
      return `Schedule "${event.data.name}" created, first run ${event.data.next_run_at}`;
    case "schedule_deleted":
      return `Schedule "${event.data.name}" deleted`;
    case "schedule_fired": {
      const { name, missed } = event.data;
      return `Schedule "${name}" ran${missed > 0 ? ` (caught up after ${missed} missed)` : ""}`;
    }
    case "schedule_skipped":
      return `Schedule "${event.data.name}" skipped: ${event.data.message}`;
    case "schedule_paused":
      return `Schedule "${event.data.name}" paused${event.data.reason === "budget" ? ": its session budget is spent" : ""}`;
    case "schedule_resumed":
      return `Schedule "${event.data.name}" resumed, next run ${event.data.next_run_at}`;
    case "mission_updated":
      return "Mission settings changed";
    case "mission_state_changed":
      return `Mission ${event.data.status}${event.data.reason ? `: ${event.data.reason}` : ""}`;
    case "mission_heartbeat":
      return `Mission heartbeat: cycle ${event.data.cycle} started`;
    case "mission_cycle_finished":
      return `Mission cycle ${event.data.cycle} ${event.data.status}`;
    case "mission_report":
      return `Mission ${event.data.interim ? "interim " : ""}report for cycle ${event.data.cycle}`;
    case "memory_learned":
      return `${event.data.action === "created" ? "Learned" : "Updated"} ${event.data.kind}: ${event.data.preview}`;
    case "memory_forgotten":
      return `Forgot ${event.data.kind}: ${event.data.preview}`;
    case "memory_cleared":
      return `Memory cleared (${plural(event.data.removed, "item")})`;
    case "memory_settings_changed":
      return event.data.learning_enabled ? "Learning resumed" : "Learning paused";
    case "budget_exhausted":
      return `Budget exhausted (${event.data.source}): ${event.data.message}`;
  }
}
