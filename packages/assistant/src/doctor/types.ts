import type { DataPaths } from "../config/paths.ts";

// The shape every doctor check returns. The CLI prints it, `GET /api/doctor` sends it, `adviceFor` reads it.

export type CheckStatus = "ok" | "warn" | "fail";

export interface CheckResult {
  /** Stable identifier, for scripts reading `doctor --json` (e.g. `config.tools_policy`, `port`). */
  id: string;
  title: string;
  status: CheckStatus;
  /** What was found, in a sentence. */
  detail: string;
  /** What to run (or do) to fix it, when it is not ok. */
  fix?: string;
  /** Whether `assistant doctor --fix` repairs it. */
  fixable: boolean;
}

/** Who is asking: the running daemon checks its own port differently from a CLI that probes it. */
export interface DaemonSelf {
  pid: number;
  port: number;
}

export interface CheckContext {
  paths: DataPaths;
  /** The process environment with the env files of the data dir beneath it (as the daemon sees it). */
  env: NodeJS.ProcessEnv;
  /** Second place llm_router.yaml is looked up in (default the working directory). */
  projectRoot?: string;
  self?: DaemonSelf;
}

export const FIX_COMMAND = "assistant doctor --fix";

export function result(
  id: string,
  title: string,
  status: CheckStatus,
  detail: string,
  fix?: { fix: string; fixable: boolean },
): CheckResult {
  return { id, title, status, detail, ...(fix ? { fix: fix.fix } : {}), fixable: fix?.fixable ?? false };
}
