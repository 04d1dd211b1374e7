import { type DaemonSettings, readSettingsOf } from "../config/settings.ts";
import { detectCommandSandbox, UNSANDBOXED_WARNING } from "../tools/commandSandbox.ts";
import { type CheckContext, type CheckResult, result } from "./types.ts";

// Can run_command children be kept away from the daemon's own files? Without a sandbox any allowed command
// (`cat`, `sed -i`) can read the auth token and the vault or rewrite the policy; the person should know.

const TITLE = "command sandbox";

export function checkCommandSandbox(ctx: CheckContext): CheckResult | undefined {
  let setting: DaemonSettings["commandSandbox"];
  try {
    setting = readSettingsOf(ctx.env, ["commandSandbox"]).commandSandbox;
  } catch {
    return undefined; // the settings check reports the bad variable
  }
  const status = detectCommandSandbox({
    dataDir: ctx.paths.dataDir,
    workspaceDir: ctx.paths.workspaceDir,
    readOnly: [],
    setting,
  });
  if (status.available) return result("command_sandbox", TITLE, "ok", status.description);
  return result("command_sandbox", TITLE, "warn", `${UNSANDBOXED_WARNING}: ${status.reason}`, {
    fix:
      process.platform === "linux"
        ? "install bubblewrap (sudo apt-get install bubblewrap); until then name the commands you allow instead of '*'"
        : "name the commands you allow in allowed_commands instead of '*', and allow none that reads files",
    fixable: false,
  });
}
