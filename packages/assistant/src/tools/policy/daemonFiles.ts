import { lstatSync, readdirSync, type Stats, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { DataPaths } from "../../config/paths.ts";
import { CASE_INSENSITIVE_PLATFORM, resolvePolicyPath, withinPrepared } from "./paths.ts";

// The built-in rule no policy, decision or mode can lift (`protected: daemon data`): the daemon's own secrets and
// configuration are out of reach of every tool. With the auth token an agent could approve its own review-queue
// items over HTTP; with tools_policy.yaml it could allow itself anything. So, after path resolution:
// - nothing reads, lists the content of or searches the secrets: auth_token, vault.json, vault.key, assistant.db
//   and its -wal/-shm/-journal, daemon.json, supervisor.json, every lock file, the atomic writer's temporary
//   copies of those (`.auth_token.<hex>.tmp`), nor the daemon's own /proc entry (its environment holds keys);
// - nothing writes anywhere in the data directory except `workspace/` (config files, plugins/, skills/,
//   models/, logs/ and reports/ included), nor the write journal or a router file kept outside it.
// Config changes go through their approved flows (policy-change approval, `/models set`, the API).

export const PROTECTED_RULE = "protected: daemon data";
export const SOURCE_PROTECTED = "built-in rule (no policy, decision or mode lifts it)";
export const PROTECTED_DESCRIPTION =
  "No tool reads, searches or writes the daemon's secrets (auth_token, vault.json, vault.key, assistant.db*, " +
  "lock files, daemon.json, supervisor.json, its /proc entry), and no tool writes in the data directory outside " +
  "workspace/ (config files, plugins/, skills/ included) nor the write journal. Config changes go through their " +
  "approved flows.";

/** Names (in the data directory) whose content is secret; a leading dot covers the atomic writer's temp copies. */
const SECRET_PREFIXES = ["auth_token", "vault.json", "vault.key", "assistant.db", "daemon.json", "supervisor.json"];

export interface DaemonFiles {
  /** The resolved data directory. */
  readonly dataDir: string;
  /** Why the built-in rule refuses this resolved absolute path, or null. */
  refusal(access: "read" | "write", path: string): string | null;
  /**
   * Why a file opened after the path check must not be read, or null: it is one of the secrets under another name
   * (a hard link; checked by device and inode only when it has more than one link), or the data directory moved
   * meanwhile (see `moved`).
   */
  openedRefusal(stat: Pick<Stats, "dev" | "ino" | "nlink">): string | null;
  /**
   * Whether the data directory is no longer the folder it was at the first check: a command that renamed a folder
   * above it would put the secrets at a path no rule names. Then every file request is refused (one stat).
   */
  moved(): boolean;
}

export interface DaemonFilesOptions {
  paths: DataPaths;
  /** Files outside the data directory that no tool writes (the write journal, a router file in the project). */
  extraNoWrite?: readonly string[];
  /** Processes whose /proc entry no tool reads (the daemon, its supervisor). */
  pids?: readonly number[];
  caseInsensitive?: boolean;
}

export function isSecretName(name: string): boolean {
  const bare = name.startsWith(".") ? name.slice(1) : name;
  return bare.endsWith(".lock") || SECRET_PREFIXES.some((prefix) => bare.startsWith(prefix));
}

export function daemonFiles(options: DaemonFilesOptions): DaemonFiles {
  const fold = options.caseInsensitive ?? CASE_INSENSITIVE_PLATFORM;
  const prepare = (path: string) => {
    const resolved = resolvePolicyPath(path, "/");
    return fold ? resolved.toLowerCase() : resolved;
  };
  const dataDir = resolvePolicyPath(options.paths.dataDir, "/");
  const dataDirF = fold ? dataDir.toLowerCase() : dataDir;
  const workspaceF = prepare(options.paths.workspaceDir);
  const noWrite = new Set((options.extraNoWrite ?? []).map(prepare));
  // /proc/self resolves to /proc/<pid>; `self` and `thread-self` are kept for callers that did not resolve.
  const procDirs = [...new Set(options.pids ?? [process.pid])].map((pid) => `/proc/${pid}`);
  procDirs.push("/proc/self", "/proc/thread-self");

  let identity: string | null = null;
  const moved = (): boolean => {
    const now = identityOf(dataDir);
    identity ??= now; // the first check, at the first tool call, records the folder the daemon works in
    return now === null || now !== identity;
  };

  const secretRefusal = (path: string): string | null => {
    if (withinPrepared(path, dataDirF) && path !== dataDirF) {
      const name = basename(path);
      if (dirname(path) === dataDirF && isSecretName(name)) return `${name} is the daemon's own secret`;
      if (name.endsWith(".lock")) return `${name} is a lock file of the daemon`;
    }
    for (const proc of procDirs) {
      if (withinPrepared(path, proc)) return `${proc} is the daemon's own process (its environment holds keys)`;
    }
    return null;
  };

  return {
    dataDir,
    moved,
    refusal(access, given) {
      const path = fold ? given.toLowerCase() : given;
      const secret = secretRefusal(path);
      if (secret !== null) return secret;
      if (access === "read") return null;
      if (withinPrepared(path, dataDirF) && !withinPrepared(path, workspaceF)) {
        return "the data directory holds the daemon's configuration; tools write only under its workspace/";
      }
      if (noWrite.has(path)) return `${path} is the daemon's own file`;
      return null;
    },
    openedRefusal(stat) {
      if (moved()) return MOVED;
      if (stat.nlink <= 1) return null;
      let names: string[];
      try {
        names = readdirSync(dataDir);
      } catch {
        return null;
      }
      for (const name of names) {
        if (!isSecretName(name)) continue;
        try {
          const secret = lstatSync(join(dataDir, name));
          if (secret.dev === stat.dev && secret.ino === stat.ino) return `the file is a hard link to ${name}`;
        } catch {
          // removed meanwhile
        }
      }
      return null;
    },
  };
}

export const MOVED =
  "the data directory was moved or replaced while the daemon runs; file and command tools are refused until the daemon is restarted";

function identityOf(path: string): string | null {
  try {
    const stat = statSync(path);
    return stat.isDirectory() ? `${stat.dev}:${stat.ino}` : null;
  } catch {
    return null;
  }
}
