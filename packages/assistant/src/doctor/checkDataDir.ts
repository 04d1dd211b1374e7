import { existsSync } from "node:fs";
import { dataDirProblem } from "../setup/dataDir.ts";
import { type CheckContext, type CheckResult, FIX_COMMAND, result } from "./types.ts";

const TITLE = "data directory";

/** The data directory exists (or can be created) and is writable. */
export function checkDataDir(ctx: CheckContext): CheckResult {
  const dir = ctx.paths.dataDir;
  const problem = dataDirProblem(dir);
  if (problem)
    return result("data_dir", TITLE, "fail", problem, {
      fix: "set ASSISTANT_DATA_DIR to a folder you own",
      fixable: false,
    });
  if (!existsSync(dir)) {
    return result("data_dir", TITLE, "warn", `${dir} does not exist yet`, {
      fix: `assistant init (or ${FIX_COMMAND})`,
      fixable: true,
    });
  }
  return result("data_dir", TITLE, "ok", `${dir} (writable)`);
}
