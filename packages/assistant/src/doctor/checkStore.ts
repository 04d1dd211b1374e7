import { existsSync } from "node:fs";
import { checkIntegrity } from "../store/database.ts";
import { MIGRATIONS } from "../store/migrations.ts";
import { type CheckContext, type CheckResult, result } from "./types.ts";

// The SQLite file, opened read-only so the check is safe while the daemon runs.

const TITLE = "database";
const RESTORE =
  "stop the daemon, move assistant.db aside (keep it as a backup) and start the daemon again to create a new one";

export function checkStore(ctx: CheckContext): CheckResult {
  const file = ctx.paths.database;
  if (!existsSync(file))
    return result("store", TITLE, "ok", "not created yet (the daemon creates it at its first start)");
  let report: ReturnType<typeof checkIntegrity>;
  try {
    report = checkIntegrity(file);
  } catch (error) {
    return result("store", TITLE, "fail", `${file} cannot be read as a database (${(error as Error).message})`, {
      fix: RESTORE,
      fixable: false,
    });
  }
  if (!report.ok) {
    const problems = report.problems.slice(0, 3).join("; ");
    return result("store", TITLE, "fail", `${file} is damaged: ${problems}`, { fix: RESTORE, fixable: false });
  }
  const latest = MIGRATIONS.at(-1)?.version ?? 0;
  if (report.schemaVersion > latest) {
    return result(
      "store",
      TITLE,
      "fail",
      `written by a newer version of the assistant (schema ${report.schemaVersion}, this build knows ${latest})`,
      {
        fix: "upgrade the assistant",
        fixable: false,
      },
    );
  }
  return result("store", TITLE, "ok", `integrity ok (schema ${report.schemaVersion})`);
}
