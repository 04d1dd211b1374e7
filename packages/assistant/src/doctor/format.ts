import { plural } from "../util/plural.ts";
import type { FixReport } from "./fix.ts";
import type { CheckResult } from "./types.ts";

// Plain-text rendering of doctor results, shared by the CLI and the `/doctor` slash command: one line per check
// with its status, and the fix to run under each check that is not ok.

const LABEL = { ok: "ok  ", warn: "warn", fail: "FAIL" } as const;

export function formatChecks(results: CheckResult[]): string {
  const width = Math.max(...results.map((r) => r.title.length));
  const lines: string[] = [];
  for (const r of results) {
    lines.push(`${LABEL[r.status]}  ${r.title.padEnd(width)}  ${r.detail}`);
    if (r.status !== "ok" && r.fix) lines.push(`      ${"".padEnd(width)}  fix: ${r.fix}`);
  }
  const count = (status: CheckResult["status"]) => results.filter((r) => r.status === status).length;
  lines.push("", `${count("ok")} ok, ${plural(count("warn"), "warning")}, ${count("fail")} failed`);
  return lines.join("\n");
}

export function formatFixes(report: FixReport): string {
  const lines = report.changes.map(
    (c) => `fixed: ${c.action} ${c.action === "chmod" ? c.detail : `${c.file} (${c.detail})`}`,
  );
  for (const s of report.skipped) lines.push(`not fixed: ${s.file}: ${s.reason}`);
  if (lines.length === 0) lines.push("nothing to fix automatically");
  return lines.join("\n");
}
