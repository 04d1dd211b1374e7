import { type EventSelection, eventPage } from "../events/eventPage.ts";
import type { StoredEvent } from "../events/registry.ts";
import type { Db } from "../store/database.ts";
import { DEFAULT_PAGE_LIMIT, type Page } from "../util/cursor.ts";

// The mission's own slice of the event log (GET /api/autonomous-mission/events): the mission_* kinds and the
// budget_exhausted events the mission raised, newest first, optionally only those at or after a time.

const MISSION_EVENTS: EventSelection = {
  kinds: ["mission_updated", "mission_state_changed", "mission_heartbeat", "mission_cycle_finished", "mission_report"],
  where: { kind: "budget_exhausted", field: "source", value: "mission" },
};

export function listMissionEvents(
  db: Db,
  query: { limit?: number; sinceMs?: number; cursor?: string },
): Page<StoredEvent> {
  return eventPage(db, MISSION_EVENTS, { ...query, limit: query.limit ?? DEFAULT_PAGE_LIMIT });
}
