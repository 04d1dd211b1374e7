import { closeSync, constants, type Dirent, lstatSync, readdirSync, readSync } from "node:fs";
import { join, relative } from "node:path";
import { z } from "zod";
import { plural } from "../../util/plural.ts";
import { openApproved } from "../files.ts";
import type { DaemonFiles } from "../policy/daemonFiles.ts";
import { resolveRequestPath } from "../policy/paths.ts";
import { defineTool, ToolFailure } from "../tool.ts";

// Text search under one allowed directory: a literal, case-insensitive match (never a regular expression, so a
// hostile pattern cannot stall the daemon), bounded in files, bytes, matches, depth and time. Symbolic links are
// not followed, so the walk never leaves the directory the policy approved. The daemon's own secrets are skipped
// silently, whatever their name (hard links included), so no query can match inside them. Matches stream as
// progress.

export const SEARCH_LIMITS = {
  maxFiles: 20_000,
  maxFileBytes: 1024 * 1024,
  maxMatches: 200,
  maxDepth: 32,
  maxLineChars: 300,
  timeMs: 10_000,
};
const SKIPPED_DIRS = new Set([".git", "node_modules", ".hg", ".svn"]);

export const searchTool = defineTool({
  name: "search",
  description:
    "Find lines containing `query` (literal text, case-insensitive) in the files under `path` (default: the " +
    "working directory), which must be in allowed_read_paths. Answers `file:line: text`, at most 200 matches; " +
    ".git and node_modules are skipped.",
  resource: "read",
  parameters: z.strictObject({
    query: z.string().min(1).max(1000).describe("The text to look for"),
    path: z.string().min(1).max(4096).optional().describe("The directory (or file) to search in"),
  }),
  async execute(args, ctx) {
    const resolved = resolveRequestPath(args.path ?? ".", { cwd: ctx.cwd });
    if ("error" in resolved) throw new ToolFailure(resolved.error);
    const root = resolved.path;
    await ctx.permit({ kind: "read", path: root });
    let rootStat: ReturnType<typeof lstatSync>;
    try {
      rootStat = lstatSync(root);
    } catch {
      throw new ToolFailure(`${root} does not exist`);
    }
    const needle = args.query.toLowerCase();
    const deadline = Date.now() + SEARCH_LIMITS.timeMs;
    const matches: string[] = [];
    const stats = { files: 0, skipped: 0 };
    let stop: string | null = null;

    const scanFile = (file: string) => {
      if (ctx.daemonFiles.refusal("read", file) !== null) return;
      const text = readSmallText(file, ctx.daemonFiles);
      if (text === SECRET) return;
      stats.files++;
      if (text === null) {
        stats.skipped++;
        return;
      }
      if (!text.toLowerCase().includes(needle)) return;
      const lines = text.split("\n");
      for (let i = 0; i < lines.length; i++) {
        const line = lines[i]!;
        if (!line.toLowerCase().includes(needle)) continue;
        const shown =
          line.length > SEARCH_LIMITS.maxLineChars ? `${line.slice(0, SEARCH_LIMITS.maxLineChars)}...` : line;
        const hit = `${relative(root, file) || file}:${i + 1}: ${shown}`;
        matches.push(hit);
        ctx.progress(hit);
        if (matches.length >= SEARCH_LIMITS.maxMatches) {
          stop = `stopped at ${SEARCH_LIMITS.maxMatches} matches`;
          return;
        }
      }
    };

    const walk = (dir: string, depth: number) => {
      let entries: Dirent[];
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        stats.skipped++;
        return;
      }
      entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const entry of entries) {
        if (stop) return;
        if (ctx.signal.aborted) {
          stop = "cancelled";
          return;
        }
        if (Date.now() > deadline) {
          stop = `stopped after ${SEARCH_LIMITS.timeMs / 1000} s`;
          return;
        }
        if (stats.files >= SEARCH_LIMITS.maxFiles) {
          stop = `stopped after ${SEARCH_LIMITS.maxFiles} files`;
          return;
        }
        const full = join(dir, entry.name);
        if (entry.isDirectory()) {
          if (SKIPPED_DIRS.has(entry.name)) continue;
          if (depth >= SEARCH_LIMITS.maxDepth) stats.skipped++;
          else walk(full, depth + 1);
        } else if (entry.isFile()) {
          scanFile(full);
        }
      }
    };

    if (rootStat.isDirectory()) walk(root, 0);
    else if (rootStat.isFile()) scanFile(root);
    else throw new ToolFailure(`${root} is neither a file nor a directory`);

    const summary = `${plural(matches.length, "match", "matches")} for ${JSON.stringify(args.query)} in ${plural(stats.files, "file")} under ${root}${stats.skipped ? ` (${stats.skipped} skipped: binary, too large or unreadable)` : ""}${stop ? `; ${stop}` : ""}.`;
    if (matches.length === 0) return { text: summary };
    return { text: `${summary}\n${matches.join("\n")}`, untrusted: `search results under ${root}` };
  },
});

/** A hard link to one of the daemon's secrets (or any file once the data dir moved): skipped without a trace. */
const SECRET = Symbol("secret");

/** The file's text, or null when it is binary, too large or unreadable. */
function readSmallText(file: string, daemonFiles: DaemonFiles): string | null | typeof SECRET {
  let opened: ReturnType<typeof openApproved>;
  try {
    opened = openApproved(file, constants.O_RDONLY);
  } catch {
    return null;
  }
  try {
    const { fd, stat } = opened;
    if (daemonFiles.openedRefusal(stat) !== null) return SECRET;
    if (!stat.isFile() || stat.size > SEARCH_LIMITS.maxFileBytes) return null;
    const buffer = Buffer.alloc(stat.size);
    let done = 0;
    while (done < buffer.length) {
      const n = readSync(fd, buffer, done, buffer.length - done, done);
      if (n === 0) break;
      done += n;
    }
    const data = buffer.subarray(0, done);
    if (data.subarray(0, 8192).includes(0)) return null;
    return data.toString("utf8");
  } finally {
    closeSync(opened.fd);
  }
}
