import type { LastCycle } from "./missionState.ts";

// The message a heartbeat sends to the mission's session. The session carries the earlier cycles' history; the
// message still restates the objective and the previous outcome so a compacted history loses neither.

const PREVIOUS_REPLY_CHARS = 1_000;

export function cycleMessage(
  objective: string,
  cycle: number,
  previous: LastCycle | null,
  previousReply: string | null,
): string {
  const lines = [`[Autonomous mission, cycle ${cycle}]`, `Objective: ${objective.trim()}`, ""];
  if (!previous) {
    lines.push("This is the first cycle of the mission.");
  } else {
    lines.push(
      `Previous cycle (${previous.cycle}): ${previous.status}${previous.reason ? ` (${previous.reason})` : ""}.`,
    );
    const reply = previousReply?.trim();
    if (reply) {
      const cut = reply.length > PREVIOUS_REPLY_CHARS ? `${reply.slice(0, PREVIOUS_REPLY_CHARS)}...` : reply;
      lines.push(`Its report:\n${cut}`);
    }
  }
  lines.push(
    "",
    "Take the next concrete step toward the objective now, using your tools where they help; one step done well " +
      "beats many started. End your answer with a short report: what you did, what is left, and the next step.",
  );
  return lines.join("\n");
}
