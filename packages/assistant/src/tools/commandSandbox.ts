import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import type { DaemonSettings } from "../config/settings.ts";
import { resolveExecutable } from "./policy/commands.ts";
import { withinPrepared } from "./policy/paths.ts";

// run_command's children must not read the daemon's secrets or rewrite its configuration, whatever command the
// policy allows (`cat auth_token`, `sed -i tools_policy.yaml`). On Linux they run under bubblewrap (Debian's
// `bubblewrap` package, the sandbox Flatpak uses), chosen over Landlock because Landlock only narrows access by
// allow-listed hierarchies (it cannot hide a few files inside a directory the user allowed) and Node has no
// binding for its syscalls, while bubblewrap needs no native code of ours and adds a few milliseconds:
// - the whole file system is seen as it is (`--bind / /`) but the data directory is an empty read-only tmpfs, with
//   only its `workspace/` bound back in: the secrets, the config files, plugins/ and skills/ are simply not there;
// - files the daemon owns outside it (the write journal, a router file in the project) are bound read-only;
// - a new PID namespace with its own /proc, so /proc/<daemon pid>/root, /environ or /fd cannot reach the daemon;
//   when the command ends the namespace dies with everything it started (no escape by setsid or double fork);
// - bubblewrap drops every capability and sets no_new_privs, so nothing inside can unmount the tmpfs or gain
//   privileges through setuid programs (sudo does not work inside).
// Where bubblewrap is missing or cannot create namespaces (macOS, Windows, containers without user namespaces),
// commands run unsandboxed: doctor, the effective view and the first command's output say so, and
// `allowed_commands: ['*']` needs `unsandboxed_commands_acknowledged: true` (policy/engine.ts).

/** Said wherever commands run without the sandbox: doctor, the effective view, the first command's output. */
export const UNSANDBOXED_WARNING =
  "commands run without a sandbox and can read the assistant's own files (auth token, vault, configuration)";

export interface CommandSandbox {
  readonly kind: "bubblewrap";
  /** The bwrap program. */
  readonly executable: string;
  /** The program and arguments that run `file args` inside the sandbox, or why `cwd` cannot be used there. */
  wrap(file: string, args: readonly string[], cwd: string): { file: string; args: string[] } | { error: string };
}

export type SandboxStatus =
  | { available: true; sandbox: CommandSandbox; description: string }
  | { available: false; reason: string };

export interface SandboxOptions {
  /** The resolved data directory: hidden. */
  dataDir: string;
  /** The resolved workspace directory: the only part of the data directory commands see (read-write). */
  workspaceDir: string;
  /** Files outside the data directory that commands may read but not write. */
  readOnly: readonly string[];
  /** ASSISTANT_COMMAND_SANDBOX. */
  setting: DaemonSettings["commandSandbox"];
}

const PROBE_TIMEOUT_MS = 5000;
/** The host's file system as it is, a fresh /dev, a PID namespace with its own /proc, gone with the daemon. */
const NAMESPACES = ["--bind", "/", "/", "--dev", "/dev", "--unshare-pid", "--proc", "/proc", "--die-with-parent"];

/** Finds and tries bubblewrap once (a few milliseconds); the daemon keeps the answer. */
export function detectCommandSandbox(options: SandboxOptions): SandboxStatus {
  if (options.setting === "off") return { available: false, reason: "ASSISTANT_COMMAND_SANDBOX=off" };
  if (process.platform !== "linux") {
    return { available: false, reason: `no command sandbox on ${process.platform} (bubblewrap is Linux only)` };
  }
  const found = resolveExecutable("bwrap");
  if ("error" in found) return { available: false, reason: "bubblewrap is not installed (apt-get install bubblewrap)" };
  // The same namespaces and mounts as a real command, over /tmp: detecting changes nothing on disk.
  const program = resolveExecutable("true");
  const probe = [...NAMESPACES, "--tmpfs", "/tmp", "--", "path" in program ? program.path : "/bin/true"];
  const result = spawnSync(found.path, probe, { stdio: ["ignore", "ignore", "pipe"], timeout: PROBE_TIMEOUT_MS });
  if (result.status !== 0) {
    const detail = result.stderr?.toString("utf8").trim().split("\n")[0] || result.error?.message || "failed";
    return { available: false, reason: `bubblewrap cannot create a sandbox here: ${detail}` };
  }
  return {
    available: true,
    sandbox: bubblewrap(found.path, options),
    description: `bubblewrap (${found.path}): commands cannot see the data directory except workspace/`,
  };
}

function bubblewrap(executable: string, options: SandboxOptions): CommandSandbox {
  const base = [
    ...NAMESPACES,
    "--tmpfs",
    options.dataDir,
    "--bind",
    options.workspaceDir,
    options.workspaceDir,
    "--remount-ro", // the empty data directory: a write there fails loudly instead of vanishing with the tmpfs
    options.dataDir,
  ];
  // Files inside the data directory are hidden already; binding them would bring them back.
  const outside = options.readOnly.filter((path) => !withinPrepared(path, options.dataDir));
  return {
    kind: "bubblewrap",
    executable,
    wrap(file, args, cwd) {
      if (withinPrepared(cwd, options.dataDir) && !withinPrepared(cwd, options.workspaceDir)) {
        return {
          error: `working directory ${cwd} is inside the assistant's data directory, which commands cannot see (only its workspace/)`,
        };
      }
      mkdirSync(options.workspaceDir, { recursive: true, mode: 0o700 }); // bound in: it must exist
      const readOnly = outside.filter((path) => existsSync(path)).flatMap((path) => ["--ro-bind", path, path]);
      return { file: executable, args: [...base, ...readOnly, "--chdir", cwd, "--", file, ...args] };
    },
  };
}
