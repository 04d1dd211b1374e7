import { z } from "zod";
import { type Db, statement } from "../store/database.ts";

// The mission's daemon state that must survive a restart, as one JSON row of the settings table: whether it is
// paused (and why), the cycle counter, its chat session, the cycle in flight and the last finished one.

const SETTINGS_KEY = "mission.state";

export const PAUSE_REASONS = ["operator", "budget"] as const;
export type PauseReason = (typeof PAUSE_REASONS)[number];

/** What the mission is doing, and why (GET /api/autonomous-mission, mission_state_changed). */
export const MISSION_STATUSES = ["idle", "running", "paused"] as const;
export type MissionStatus = (typeof MISSION_STATUSES)[number];
/** The pause reason, or why an idle mission runs nothing. */
export const MISSION_STATUS_REASONS = [...PAUSE_REASONS, "disabled", "config_invalid", "start_failed"] as const;
export type StatusReason = (typeof MISSION_STATUS_REASONS)[number];

const currentCycleSchema = z.object({
  cycle: z.number().int(),
  task_id: z.string(),
  task_type: z.string(),
  started_at: z.string(),
});

export const lastCycleSchema = z.object({
  cycle: z.number().int(),
  task_id: z.string(),
  status: z.string(),
  reason: z.string().nullable(),
  finished_at: z.string(),
  /** The final report's Markdown file; null when it could not be written. */
  report_path: z.string().nullable(),
});

const stateSchema = z.object({
  paused: z.boolean(),
  pause_reason: z.enum(PAUSE_REASONS).nullable(),
  /** What the operator should do about the pause (the budget hint); null for a plain pause. */
  pause_message: z.string().nullable(),
  cycles: z.number().int().min(0),
  session_id: z.string().nullable(),
  /** When the last cycle started (epoch ms): the heartbeat rhythm continues from it after a restart. */
  last_heartbeat_at: z.number().nullable(),
  current: currentCycleSchema.nullable(),
  last_cycle: lastCycleSchema.nullable(),
});

export type MissionState = z.infer<typeof stateSchema>;
export type CurrentCycle = z.infer<typeof currentCycleSchema>;
export type LastCycle = z.infer<typeof lastCycleSchema>;

export const INITIAL_STATE: MissionState = {
  paused: false,
  pause_reason: null,
  pause_message: null,
  cycles: 0,
  session_id: null,
  last_heartbeat_at: null,
  current: null,
  last_cycle: null,
};

/** The stored state; a missing or unreadable row is the initial state (the row is rewritten at the next change). */
export function loadMissionState(db: Db): MissionState {
  const row = statement(db, "SELECT value FROM settings WHERE key = ?").get(SETTINGS_KEY) as
    | { value: string }
    | undefined;
  if (!row) return { ...INITIAL_STATE };
  try {
    const parsed = stateSchema.safeParse(JSON.parse(row.value));
    return parsed.success ? parsed.data : { ...INITIAL_STATE };
  } catch {
    return { ...INITIAL_STATE };
  }
}

export function saveMissionState(db: Db, state: MissionState): void {
  statement(
    db,
    "INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
  ).run(SETTINGS_KEY, JSON.stringify(state), new Date().toISOString());
}
