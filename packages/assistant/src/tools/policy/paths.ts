import { lstatSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve, sep } from "node:path";

// Path resolution and matching for the path allow lists. Resolution (the only I/O) is separate from matching,
// so a policy decision stays pure. Nothing is ever expanded: `~`, `$HOME` and `%USERPROFILE%` are literal
// names relative to the working directory, exactly as the OS would treat them without a shell.

export type ResolvedPath = { path: string } | { error: string };

export interface ResolveOptions {
  /** What relative paths are relative to (the daemon's or the task's working directory). */
  cwd: string;
  /**
   * Resolving the target of a write: an existing file with more than one hard link is refused. Its other names
   * may lie outside the allowed write paths (a link made earlier, or by another user in a shared directory), and
   * writing through the allowed name would change the file they name too. Path checks cannot see other names.
   */
  forWrite?: boolean;
}

/** Default case sensitivity of the platform's usual file systems. */
export const CASE_INSENSITIVE_PLATFORM = process.platform === "win32" || process.platform === "darwin";

/**
 * Turns a path given by a tool call into the real absolute path the tool must then use: relative to cwd,
 * `..` collapsed, symlinks followed on the longest existing prefix (so a new file under a symlinked directory
 * is placed where the link points), Unicode NFC. Refuses empty paths, NUL bytes and dangling symlinks.
 */
export function resolveRequestPath(input: string, options: ResolveOptions): ResolvedPath {
  if (typeof input !== "string" || input.length === 0) return { error: "empty path" };
  if (input.includes("\0")) return { error: "path contains a NUL byte" };
  if (!isAbsolute(options.cwd)) return { error: `working directory ${options.cwd} is not absolute` };
  const absolute = resolve(options.cwd.normalize("NFC"), input.normalize("NFC"));
  const real = realpathOfLongestPrefix(absolute);
  if ("error" in real) return real;
  if (options.forWrite) {
    const problem = hardLinkProblem(real.path);
    if (problem) return { error: problem };
  }
  return { path: real.path.normalize("NFC") };
}

function realpathOfLongestPrefix(absolute: string): ResolvedPath {
  const tail: string[] = [];
  let current = absolute;
  for (;;) {
    try {
      const real = realpathSync.native(current);
      return { path: tail.length === 0 ? real : join(real, ...tail.reverse()) };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ENOTDIR") return { error: `cannot resolve ${current}: ${code ?? "error"}` };
    }
    // The name does not resolve. If it exists as a link, it dangles: writing through it would create its target
    // wherever that points, so it is refused rather than treated as a new file.
    if (isSymlink(current)) return { error: `${current} is a dangling symbolic link` };
    const parent = dirname(current);
    if (parent === current) return { error: `cannot resolve ${absolute}` };
    tail.push(basename(current));
    current = parent;
  }
}

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

function hardLinkProblem(path: string): string | null {
  try {
    const stat = lstatSync(path);
    if (stat.isFile() && stat.nlink > 1) {
      return `${path} has ${stat.nlink} hard links; writing it would change files outside the allowed paths`;
    }
  } catch {
    // Not existing yet: a new file has one name.
  }
  return null;
}

/**
 * Resolves one prefix of a policy list once, when the engine is built: `.` is the daemon's working directory,
 * relative entries are relative to it, symlinks are followed like request paths. Unresolvable entries are
 * returned as written (absolute, NFC) so they can still only match that literal place.
 */
export function resolvePolicyPath(entry: string, cwd: string): string {
  const resolved = resolveRequestPath(entry, { cwd });
  return "path" in resolved ? resolved.path : resolve(cwd, entry.normalize("NFC"));
}

/**
 * Whether `path` is `prefix` or lies below it, on whole segments: `/x/allowed` covers `/x/allowed/a` but not
 * `/x/allowed-evil`. Both must be resolved absolute paths. Case-insensitive when asked (win32, darwin).
 */
export function pathWithin(path: string, prefix: string, caseInsensitive = CASE_INSENSITIVE_PLATFORM): boolean {
  const p = caseInsensitive ? path.toLowerCase() : path;
  const q = caseInsensitive ? prefix.toLowerCase() : prefix;
  return withinPrepared(p, q);
}

/** `pathWithin` for already case-folded inputs (the engine folds policy prefixes once). */
export function withinPrepared(path: string, prefix: string): boolean {
  if (!path.startsWith(prefix)) return false;
  if (path.length === prefix.length) return true;
  return prefix.endsWith(sep) || path.charCodeAt(prefix.length) === sep.charCodeAt(0);
}
