import type { StoredEvent } from "@assistant/client";

// One readable line per stored event of a task's timeline (the same wording as `assistant task events`,
// src/cli/task.ts in packages/assistant). Model and tool text stays plain text here: the timeline renders it as
// text, never as HTML.

const MAX = 160;

function preview(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > MAX ? `${line.slice(0, MAX)}…` : line;
}

export function eventLine(event: StoredEvent): string {
  switch (event.kind) {
    case "task_created": {
      const { origin, task_type, message_preview } = event.data;
      return `created (${origin}${task_type ? `, ${task_type}` : ""}): ${preview(message_preview)}`;
    }
    case "task_state_changed":
      return `${event.data.status}${event.data.reason ? ` (${event.data.reason})` : ""}`;
    case "tool_call_requested":
      return `tool call ${event.data.tool} ${preview(event.data.arguments_summary)}`;
    case "tool_call_completed": {
      const { tool, status, rule } = event.data;
      return `tool call ${tool}: ${status}${rule ? ` (${rule})` : ""}`;
    }
    case "approval_requested":
      return `approval requested for ${event.data.tool}`;
    case "approval_resolved":
      return `approval ${event.data.status} for ${event.data.tool}${event.data.note ? `: ${preview(event.data.note)}` : ""}`;
    case "message_delta":
      return `round ${event.data.round}: ${preview(event.data.text)}`;
    case "user_steering_queued":
    case "user_follow_up_queued":
      return `${event.kind === "user_steering_queued" ? "steering" : "follow-up"} queued: ${preview(event.data.text_preview)}`;
    default:
      return `${event.kind.replaceAll("_", " ")} ${preview(JSON.stringify(event.data))}`;
  }
}
