import type { MissionView } from "./missionService.ts";

// The mission as text, for `assistant mission status|pause|resume|edit`.

export function formatMission(view: MissionView): string {
  const reason = view.status_reason ? ` (${view.status_reason})` : "";
  const lines = [`mission ${view.status}${reason}`];
  if (view.status_message) lines.push(`  ${view.status_message}`);
  if (view.error) lines.push(`  error      ${view.error.file}: ${view.error.key}: ${view.error.reason}`);
  else {
    lines.push(
      `  objective  ${view.objective || "(none)"}`,
      `  enabled    ${view.enabled ? "yes" : "no"}, a heartbeat every ${view.heartbeat_secs} s, task type ${view.task_type}`,
    );
  }
  const last = view.last_cycle;
  lines.push(
    `  cycles     ${view.cycles}${view.current_cycle !== null ? `, cycle ${view.current_cycle} running (task ${view.current_task_id})` : ""}`,
  );
  if (last) {
    lines.push(
      `  last       cycle ${last.cycle} ${last.status}${last.reason ? ` (${last.reason})` : ""} at ${last.finished_at}`,
    );
    if (last.report_path) lines.push(`  report     ${last.report_path}`);
  }
  if (view.next_heartbeat_at) lines.push(`  next       ${view.next_heartbeat_at}`);
  return lines.join("\n");
}
