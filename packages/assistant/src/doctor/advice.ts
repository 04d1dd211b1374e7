import { type CheckResult, FIX_COMMAND } from "./types.ts";

// Turns check results into a short to-do list a person can follow top to bottom: one `doctor --fix` for all
// that doctor repairs itself, then one step per remaining problem, failures before warnings.

export function adviceFor(results: CheckResult[]): string[] {
  const problems = results.filter((r) => r.status !== "ok");
  if (problems.length === 0) {
    return ["Everything checks out. Start the daemon with `assistant start` if it is not running yet."];
  }
  const advice: string[] = [];
  const fixable = problems.filter((r) => r.fixable);
  if (fixable.length > 0) advice.push(`Run \`${FIX_COMMAND}\` to repair: ${fixable.map((r) => r.title).join(", ")}.`);
  const manual = problems.filter((r) => !r.fixable).sort((a, b) => rank(a) - rank(b));
  for (const r of manual) {
    const lead = r.status === "fail" ? "Must fix" : "Optional";
    advice.push(`${lead}, ${r.title}: ${sentence(r.detail)}${r.fix ? ` Do: ${sentence(r.fix)}` : ""}`);
  }
  advice.push(
    problems.some((r) => r.status === "fail")
      ? "Then run `assistant doctor` again: it exits with status 1 while a check fails."
      : "Warnings do not stop the daemon; `assistant doctor` shows the state again at any time.",
  );
  return advice;
}

const rank = (r: CheckResult) => (r.status === "fail" ? 0 : 1);

function sentence(text: string): string {
  const trimmed = text.trim();
  return /[.!?]$/.test(trimmed) ? trimmed : `${trimmed}.`;
}
