import { homedir } from "node:os";
import { isAbsolute, parse } from "node:path";
import type { ToolsPolicy } from "../../config/schemas/toolsPolicy.ts";
import { resolvePolicyPath } from "./paths.ts";

// What the path entries of tools_policy.yaml mean on this machine: `.` and other relative entries are relative to
// the daemon's working directory, which depends on where it was started (the project after `npm start`, the whole
// home folder when started from `~`). Shown wherever the policy is (`toolset effective`, GET /api/tools/effective,
// doctor), with a warning when an entry opens the home folder or the root of the file system.

export const PATH_LISTS = ["allowed_read_paths", "allowed_write_paths"] as const;
export type PathList = (typeof PATH_LISTS)[number];

export interface PolicyPathView {
  list: PathList;
  /** As written in the file. */
  entry: string;
  /** The absolute path it allows (symlinks followed). */
  path: string;
  /** Set when it opens the whole home folder or file system. */
  warning: string | null;
}

/** Every path entry of the policy with what it resolves to against `cwd` (the daemon's working directory). */
export function policyPathViews(policy: ToolsPolicy, cwd: string, home = homedir()): PolicyPathView[] {
  const realHome = resolvePolicyPath(home, "/");
  return PATH_LISTS.flatMap((list) =>
    policy[list].map((entry) => {
      const path = resolvePolicyPath(entry, cwd);
      return { list, entry, path, warning: broadWarning(list, entry, path, realHome) };
    }),
  );
}

function broadWarning(list: PathList, entry: string, path: string, home: string): string | null {
  const what = path === home ? "your whole home folder" : parse(path).root === path ? "the whole file system" : null;
  if (what === null) return null;
  const access = list === "allowed_write_paths" ? "write" : "read";
  const relative = isAbsolute(entry)
    ? ""
    : ` ("${entry}" is relative to the daemon's working directory: start the daemon from the folder you mean, or write its full path)`;
  return `${list}: "${entry}" is ${path}, ${what}: the agent may ${access} every file in it${relative}`;
}

/** An entry as shown to a person: `.` becomes `. (/the/folder)`, an absolute entry stays as written. */
export function shownEntry(entry: string, path: string): string {
  return entry === path ? entry : `${entry} (${path})`;
}
