import type { ScheduleRecord } from "./store.ts";

// Schedules as text, for /schedule and `assistant schedule`.

export function formatCadence(schedule: Pick<ScheduleRecord, "interval_secs" | "cron" | "timezone">): string {
  if (schedule.interval_secs !== null) return `every ${schedule.interval_secs} s`;
  return `cron "${schedule.cron}"${schedule.timezone ? ` ${schedule.timezone}` : ""}`;
}

export function formatSchedule(schedule: ScheduleRecord): string {
  const lines = [
    `${schedule.id}  ${schedule.name}  (${formatCadence(schedule)}, ${schedule.status})`,
    `    ${schedule.description.length > 120 ? `${schedule.description.slice(0, 117)}...` : schedule.description}`,
    `    ${schedule.status === "paused" ? "no next run while paused" : `next run ${schedule.next_run_at}`}, runs ${schedule.runs}${schedule.last_task_id ? `, last task ${schedule.last_task_id}` : ""}${schedule.running_task_id ? " (running)" : ""}`,
  ];
  if (schedule.status_reason) lines.push(`    ${schedule.status_reason}`);
  return lines.join("\n");
}

/** `create` is how the surface showing the list creates one (the slash command, or the CLI command). */
export function formatSchedules(schedules: ScheduleRecord[], create: string): string {
  if (schedules.length === 0) return `No schedules. Create one with ${create}.`;
  return ["Schedules:", ...schedules.map(formatSchedule)].join("\n");
}
