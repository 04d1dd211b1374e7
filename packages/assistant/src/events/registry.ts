import { z } from "zod";
import { TASK_ORIGINS, TASK_STATUSES } from "../agent/tasks.ts";
import { MEMORY_ACTIONS, MEMORY_KINDS, MEMORY_ORIGINS } from "../memory/store.ts";
import { MISSION_STATUS_REASONS, MISSION_STATUSES } from "../mission/missionState.ts";
import { FINAL_QUEUE_STATUSES } from "../tools/approvals/queueStatus.ts";
import { TOOL_CALL_STATUSES } from "../tools/tool.ts";

// The one list of event kinds (docs/http-api.md#events): each kind is declared once with its payload schema.
// The SSE stream, the stored timeline and the OpenAPI document all derive from it. A feature adds its kinds here.
// Statuses and kinds that a domain owns come from that domain's module, so an event can never name a status the
// domain does not have (those modules must not import events/: the registry would then be part of a cycle).

export const EVENT_KINDS = {
  daemon_started: z.object({ version: z.string(), pid: z.number().int() }),
  daemon_stopping: z.object({ reason: z.string() }),
  vault_updated: z.object({ key: z.string(), action: z.enum(["set", "delete"]) }),
  approval_requested: z.object({
    id: z.string(),
    tool: z.string(),
    rule: z.string(),
    arguments_summary: z.string(),
    expires_at: z.string(),
  }),
  approval_resolved: z.object({
    id: z.string(),
    tool: z.string(),
    status: z.enum(FINAL_QUEUE_STATUSES),
    note: z.string().nullable(),
    /** `timeout` when the item expired on its own (ASSISTANT_APPROVAL_TIMEOUT_SECS), else `operator`. */
    by: z.enum(["operator", "timeout"]),
  }),
  tool_call_requested: z.object({ call_id: z.string(), tool: z.string(), arguments_summary: z.string() }),
  tool_call_completed: z.object({
    call_id: z.string(),
    tool: z.string(),
    status: z.enum(TOOL_CALL_STATUSES),
    rule: z.string().nullable(),
    queue_item_id: z.string().nullable(),
    truncated: z.boolean(),
    duration_ms: z.number().int(),
    /** The start of what the model read (secrets redacted). */
    output_preview: z.string(),
  }),
  task_created: z.object({
    origin: z.enum(TASK_ORIGINS),
    task_type: z.string().nullable(),
    parent_id: z.string().nullable(),
    message_preview: z.string(),
  }),
  task_state_changed: z.object({
    status: z.enum(TASK_STATUSES),
    previous: z.enum(TASK_STATUSES),
    reason: z.string().nullable(),
  }),
  /** The text of one LLM turn of a task (tokens stream live on the message routes; the turn is stored). */
  message_delta: z.object({ round: z.number().int(), text: z.string(), provider: z.string(), model: z.string() }),
  user_steering_queued: z.object({ queue_id: z.string(), text_preview: z.string() }),
  user_steering_applied: z.object({ queue_id: z.string() }),
  user_follow_up_queued: z.object({ queue_id: z.string(), text_preview: z.string() }),
  user_follow_up_applied: z.object({ queue_id: z.string() }),
  skills_reloaded: z.object({ loaded: z.number().int(), invalid: z.number().int() }),
  skill_installed: z.object({ name: z.string(), source: z.string(), files: z.number().int() }),
  skill_uninstalled: z.object({ name: z.string() }),
  plugins_reloaded: z.object({ loaded: z.number().int(), invalid: z.number().int() }),
  plugin_installed: z.object({ plugin_id: z.string(), version: z.string() }),
  plugin_uninstalled: z.object({ plugin_id: z.string() }),
  /** A call's outcome lowered the score under the threshold: the plugin is off until its reputation is reset. */
  plugin_disabled: z.object({ plugin_id: z.string(), score: z.number(), reason: z.string() }),
  plugin_reputation_reset: z.object({ plugin_id: z.string().nullable() }),
  /** Learning (or the remember tool, or the flush before compaction) stored or updated a memory. */
  memory_learned: z.object({
    memory_id: z.string(),
    kind: z.enum(MEMORY_KINDS),
    action: z.enum(MEMORY_ACTIONS),
    origin: z.enum(MEMORY_ORIGINS),
    preview: z.string(),
  }),
  memory_forgotten: z.object({ memory_id: z.string(), kind: z.enum(MEMORY_KINDS), preview: z.string() }),
  memory_cleared: z.object({ removed: z.number().int() }),
  memory_settings_changed: z.object({ learning_enabled: z.boolean() }),
  schedule_created: z.object({ schedule_id: z.string(), name: z.string(), next_run_at: z.string() }),
  schedule_deleted: z.object({ schedule_id: z.string(), name: z.string() }),
  /** A run started as a task; `missed` counts the windows that passed while the daemon was down (run once). */
  schedule_fired: z.object({
    schedule_id: z.string(),
    name: z.string(),
    task_id: z.string(),
    scheduled_for: z.string(),
    missed: z.number().int(),
  }),
  /** A due run did not start: the previous run is still going (`overlap`) or the budget is spent (`budget`). */
  schedule_skipped: z.object({
    schedule_id: z.string(),
    name: z.string(),
    reason: z.enum(["overlap", "budget"]),
    message: z.string(),
  }),
  /** Paused by request or because its session budget is spent; `message` says how to resume it. */
  schedule_paused: z.object({
    schedule_id: z.string(),
    name: z.string(),
    reason: z.enum(["request", "budget"]),
    message: z.string(),
  }),
  schedule_resumed: z.object({ schedule_id: z.string(), name: z.string(), next_run_at: z.string() }),
  mission_updated: z.object({ fields: z.array(z.string()) }),
  mission_state_changed: z.object({
    status: z.enum(MISSION_STATUSES),
    previous: z.enum(MISSION_STATUSES),
    reason: z.enum(MISSION_STATUS_REASONS).nullable(),
  }),
  /** A heartbeat started a mission cycle as a task. */
  mission_heartbeat: z.object({ cycle: z.number().int(), task_id: z.string(), task_type: z.string() }),
  mission_cycle_finished: z.object({
    cycle: z.number().int(),
    task_id: z.string(),
    status: z.enum(TASK_STATUSES),
    reason: z.string().nullable(),
  }),
  /** A mission report was written (`interim` while a long cycle still runs). */
  mission_report: z.object({ cycle: z.number().int(), path: z.string(), interim: z.boolean() }),
  /** The session token/cost budget stopped a schedule run or the mission; says what to do. */
  budget_exhausted: z.object({
    source: z.enum(["schedule", "mission"]),
    source_id: z.string(),
    session_id: z.string(),
    message: z.string(),
  }),
} as const;

export type EventKind = keyof typeof EVENT_KINDS;
export type EventPayload<K extends EventKind> = z.infer<(typeof EVENT_KINDS)[K]>;

export function isEventKind(value: string): value is EventKind {
  return Object.hasOwn(EVENT_KINDS, value);
}

/** What every stored event carries besides its kind and payload; the sequence number is the id. */
const envelope = {
  id: z.string(),
  ts: z.string(),
  task_id: z.string().optional(),
  session_id: z.string().optional(),
};

type StoredEventSchemas = {
  [K in EventKind]: z.ZodObject<typeof envelope & { kind: z.ZodLiteral<K>; data: (typeof EVENT_KINDS)[K] }>;
};

// Object.entries forgets which payload goes with which kind; the mapped type above restores it.
const STORED_EVENT_SCHEMAS = Object.fromEntries(
  Object.entries(EVENT_KINDS).map(([kind, data]) => [kind, z.object({ ...envelope, kind: z.literal(kind), data })]),
) as StoredEventSchemas;

/** A stored event as it is sent on the streams (`data:` of an SSE message): one object per kind, told apart by `kind`. */
export const storedEventSchema = z.discriminatedUnion(
  "kind",
  Object.values(STORED_EVENT_SCHEMAS) as [StoredEventSchemas[EventKind], ...StoredEventSchemas[EventKind][]],
);

/** A stored event; `StoredEvent<"task_created">` is one kind, and a check of `kind` narrows `data` to its payload. */
export type StoredEvent<K extends EventKind = EventKind> = z.infer<StoredEventSchemas[K]>;
