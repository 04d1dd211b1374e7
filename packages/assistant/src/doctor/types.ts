import { z } from "zod";
import type { DataPaths } from "../config/paths.ts";

// The shape every doctor check returns. The CLI prints it, `GET /api/doctor` sends it, `adviceFor` reads it.

export const CHECK_STATUSES = ["ok", "warn", "fail"] as const;
export type CheckStatus = (typeof CHECK_STATUSES)[number];

export const checkResultSchema = z
  .object({
    /** Stable identifier, for scripts reading `doctor --json` (e.g. `config.tools_policy`, `port`). */
    id: z.string(),
    title: z.string(),
    status: z.enum(CHECK_STATUSES),
    /** What was found, in a sentence. */
    detail: z.string(),
    /** What to run (or do) to fix it, when it is not ok. */
    fix: z.string().optional(),
    /** Whether `assistant doctor --fix` repairs it. */
    fixable: z.boolean(),
  })
  .meta({ id: "DoctorCheck" });

export type CheckResult = z.infer<typeof checkResultSchema>;

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
