import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { ReportItem } from "../agent/reports.ts";
import { writeFileAtomic } from "../util/atomicWrite.ts";

// The report of a mission cycle, in report_dir as mission-cycle-<n>.json and .md (atomic writes). A cycle that
// runs longer than the interim period also gets mission-cycle-<n>-interim.json/.md, rewritten every period with
// what it has done so far.

export interface MissionReport {
  objective: string;
  cycle: number;
  /** True while the cycle still runs: the lists and `reply` are what it has done so far. */
  interim: boolean;
  task_id: string;
  session_id: string;
  task_type: string;
  status: string;
  reason: string | null;
  started_at: string;
  /** When the task ended; null in an interim report. */
  finished_at: string | null;
  written_at: string;
  /** The task's answer; in an interim report the model's latest turn so far. */
  reply: string | null;
  done: ReportItem[];
  needs_review: ReportItem[];
  failed: ReportItem[];
  next_steps: ReportItem[];
}

export function missionReportPaths(dir: string, cycle: number, interim: boolean): { json: string; markdown: string } {
  const base = `mission-cycle-${String(cycle).padStart(4, "0")}${interim ? "-interim" : ""}`;
  return { json: join(dir, `${base}.json`), markdown: join(dir, `${base}.md`) };
}

/** Writes the report's JSON and Markdown; returns the Markdown path. */
export function writeMissionReport(dir: string, report: MissionReport): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const paths = missionReportPaths(dir, report.cycle, report.interim);
  writeFileAtomic(paths.json, `${JSON.stringify(report, null, 2)}\n`);
  writeFileAtomic(paths.markdown, missionReportMarkdown(report));
  return paths.markdown;
}

export function missionReportMarkdown(report: MissionReport): string {
  const section = (title: string, items: ReportItem[]) =>
    `## ${title}\n\n${items.length === 0 ? "- (none)" : items.map((i) => `- ${i.text}`).join("\n")}\n`;
  const title = `# Mission cycle ${report.cycle}${report.interim ? " (interim: still running)" : ""}\n`;
  return [
    title,
    `- objective: ${report.objective.replace(/\s+/g, " ").trim()}`,
    `- task: ${report.task_id} (${report.task_type}), session ${report.session_id}`,
    `- status: ${report.status}${report.reason ? ` (${report.reason})` : ""}`,
    `- started: ${report.started_at}; finished: ${report.finished_at ?? "-"}; written: ${report.written_at}\n`,
    `## ${report.interim ? "Latest output" : "Reply"}\n\n${report.reply?.trim() || "(none)"}\n`,
    section("Done", report.done),
    section("Needs review", report.needs_review),
    section("Failed", report.failed),
    section("Next steps", report.next_steps),
  ].join("\n");
}
