// The doctor service: read-only health checks, the automatic repairs, and advice. Used by `assistant doctor`
// (directly on the data directory) and by `GET /api/doctor` (inside the running daemon).
export { adviceFor } from "./advice.ts";
export { applyFixes, type FixChange, type FixReport } from "./fix.ts";
export { formatChecks, formatFixes } from "./format.ts";
export { runChecks, worstStatus } from "./runChecks.ts";
export type { CheckResult, CheckStatus, DaemonSelf } from "./types.ts";
