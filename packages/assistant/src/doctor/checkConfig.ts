import { basename, isAbsolute } from "node:path";
import { CONFIG_FILES, type ConfigId } from "../config/configFiles.ts";
import { describeUnknownEnvName, unknownEnvNames } from "../config/envNames.ts";
import { readSettings } from "../config/settings.ts";
import { type ConfigFileReport, validateConfigFiles } from "../config/validate.ts";
import { policyPathViews } from "../tools/policy/pathViews.ts";
import { readPolicyFile } from "../tools/policySource.ts";
import { ConfigError } from "../util/errors.ts";
import { type CheckContext, type CheckResult, FIX_COMMAND, result } from "./types.ts";

// One line per config file: the same validation the daemon runs at start, so "doctor is happy" means "the daemon
// will accept this configuration".

/** What a missing file means when doctor should say more than ok (the ones `doctor --fix` writes). */
const MISSING_WARNINGS: Record<string, string> = {
  tools_policy: "missing: everything is denied (no files, commands, web or devices); doctor --fix writes a starter",
  llm_router: "missing: the built-in default route applies (embedded model, then core); doctor --fix writes the file",
};

export function checkConfigFiles(ctx: CheckContext): CheckResult[] {
  const reports = validateConfigFiles(ctx.paths, ctx.projectRoot ? { projectRoot: ctx.projectRoot } : {});
  const envFilesValid = !reports.some(
    (r) => r.status === "invalid" && [ctx.paths.assistantEnv, ctx.paths.connectorsEnv].includes(r.file),
  );
  const names = envFilesValid ? checkEnvNames(ctx) : undefined;
  const policyValid = reports.some((r) => r.file === ctx.paths.toolsPolicy && r.status === "ok");
  const paths = policyValid ? checkPolicyPaths(ctx) : undefined;
  return [...reports.map((report) => fileResult(report)), ...(names ? [names] : []), ...(paths ? [paths] : [])];
}

/**
 * What the relative path entries of tools_policy.yaml (`.`) mean for a daemon started where doctor runs (the
 * running daemon's own doctor uses its own working directory), and a warning for an entry that opens the home
 * folder or `/`. Nothing to say when every entry is an absolute path below them.
 */
function checkPolicyPaths(ctx: CheckContext): CheckResult | undefined {
  const { policy } = readPolicyFile(ctx.paths.toolsPolicy);
  if (!policy) return undefined;
  const cwd = process.cwd();
  const views = policyPathViews(policy, cwd);
  const warnings = views.flatMap((v) => (v.warning ? [v.warning] : []));
  const relative = views.filter((v) => v.entry !== v.path && !isAbsolute(v.entry));
  if (warnings.length > 0) {
    return result("tools.policy_paths", "policy paths", "warn", warnings.join("; "), {
      fix: `write the folders you mean as full paths in ${ctx.paths.toolsPolicy} (or start the daemon from the project folder)`,
      fixable: false,
    });
  }
  if (relative.length === 0) return undefined;
  const shown = relative.map((v) => `${v.list}: ${v.entry} = ${v.path}`).join(", ");
  return result(
    "tools.policy_paths",
    "policy paths",
    "ok",
    `${shown} (relative to ${cwd}, where a daemon started here runs)`,
  );
}

/** A warning listing the `ASSISTANT_*` names of the env files that nothing reads (typos), when there are any. */
function checkEnvNames(ctx: CheckContext): CheckResult | undefined {
  const unknown = unknownEnvNames(ctx.paths);
  if (unknown.length === 0) return undefined;
  const first = unknown[0]!;
  return result("env.unknown_variables", "env file names", "warn", unknown.map(describeUnknownEnvName).join("; "), {
    fix: first.suggestion
      ? `rename ${first.key} to ${first.suggestion} in ${first.file}`
      : `\`assistant config env unset ${first.key}\``,
    fixable: false,
  });
}

function fileResult(report: ConfigFileReport): CheckResult {
  const id = `config.${report.id}`;
  const title = basename(report.file);
  if (report.status === "invalid") {
    const where = report.error?.key ? `${report.error.key}: ` : "";
    return result(id, title, "fail", `${report.file}: ${where}${report.error?.reason ?? "invalid"}`, {
      fix: `edit ${report.file}, then run \`assistant config validate\``,
      fixable: false,
    });
  }
  if (report.status === "missing") {
    const warning = MISSING_WARNINGS[report.id];
    if (warning) return result(id, title, "warn", warning, { fix: FIX_COMMAND, fixable: true });
    const meaning = report.id in CONFIG_FILES ? CONFIG_FILES[report.id as ConfigId].whenMissing : "no variables set";
    return result(id, title, "ok", `not present: ${meaning}`);
  }
  return result(id, title, "ok", "valid");
}

/** The variables the daemon parses at start (ASSISTANT_PORT, ASSISTANT_BIND, ASSISTANT_LOG...). */
export function checkSettings(ctx: CheckContext): CheckResult {
  try {
    const settings = readSettings(ctx.env);
    return result(
      "settings",
      "daemon settings",
      "ok",
      `listen on ${settings.bind}:${settings.port}, log level ${settings.logLevel}`,
    );
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return result("settings", "daemon settings", "fail", `${error.key}: ${error.reason}`, {
      fix: `fix ${error.key} in your environment or with \`assistant config env set ${error.key} <value>\``,
      fixable: false,
    });
  }
}
