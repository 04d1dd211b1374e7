import type { Db } from "../store/database.ts";
import type { Page } from "../util/cursor.ts";
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

export interface TimelineItem extends StoredEvent {
  category: TimelineCategory;
  title: string;
}

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

function titleOf(event: StoredEvent): string {
  const d = event.data as Record<string, string | number | boolean | null>;
  switch (event.kind) {
    case "task_created":
      return `Task created (${d.origin}): ${d.message_preview}`;
    case "task_state_changed":
      return `Task ${d.status}${d.reason ? `: ${d.reason}` : ""}`;
    case "schedule_created":
      return `Schedule "${d.name}" created, first run ${d.next_run_at}`;
    case "schedule_deleted":
      return `Schedule "${d.name}" deleted`;
    case "schedule_fired":
      return `Schedule "${d.name}" ran${Number(d.missed) > 0 ? ` (caught up after ${d.missed} missed)` : ""}`;
    case "schedule_skipped":
      return `Schedule "${d.name}" skipped: ${d.message}`;
    case "schedule_paused":
      return `Schedule "${d.name}" paused${d.reason === "budget" ? ": its session budget is spent" : ""}`;
    case "schedule_resumed":
      return `Schedule "${d.name}" resumed, next run ${d.next_run_at}`;
    case "mission_updated":
      return "Mission settings changed";
    case "mission_state_changed":
      return `Mission ${d.status}${d.reason ? `: ${d.reason}` : ""}`;
    case "mission_heartbeat":
      return `Mission heartbeat: cycle ${d.cycle} started`;
    case "mission_cycle_finished":
      return `Mission cycle ${d.cycle} ${d.status}`;
    case "mission_report":
      return `Mission ${d.interim ? "interim " : ""}report for cycle ${d.cycle}`;
    case "memory_learned":
      return `${d.action === "created" ? "Learned" : "Updated"} ${d.kind}: ${d.preview}`;
    case "memory_forgotten":
      return `Forgot ${d.kind}: ${d.preview}`;
    case "memory_cleared":
      return `Memory cleared (${d.removed} items)`;
    case "memory_settings_changed":
      return d.learning_enabled ? "Learning resumed" : "Learning paused";
    case "budget_exhausted":
      return `Budget exhausted (${d.source}): ${d.message}`;
    default:
      return event.kind;
  }
}
