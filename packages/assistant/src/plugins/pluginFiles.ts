import { closeSync, constants, type Dirent, readdirSync } from "node:fs";
import { isAbsolute } from "node:path";
import { z } from "zod";
import { fileKind, openApproved, readAt } from "../tools/files.ts";
import { MAX_WRITE_BYTES, writeApprovedFile } from "../tools/fileWrite.ts";
import type { DaemonFiles } from "../tools/policy/daemonFiles.ts";
import { pathWithin, resolvePolicyPath, resolveRequestPath } from "../tools/policy/paths.ts";
import { type PermitRequest, protectedDenied, type ToolContext, ToolDenied, ToolFailure } from "../tools/tool.ts";

// The file access a plugin gets through its one file host function, `extism:host/user` `fs`: a JSON request in,
// a JSON result out. A path must lie under the manifest's allowed_paths AND be allowed by tools_policy.yaml
// (allowed_read_paths / allowed_write_paths, require_approval, persistent decisions for the plugin tool), exactly
// as read_file and write_file check it. A refusal fails the whole call as denied (like an HTTP refusal); anything
// else that goes wrong (missing file, too large, a directory) is an ordinary result the plugin can handle.

export const FILES_MODULE = "extism:host/user";
export const FILES_FUNCTION = "fs";
export const MAX_PLUGIN_READ_BYTES = 2 * 1024 * 1024;
const MAX_LIST_ENTRIES = 1000;

const path = z.string().min(1).max(4096);
const requestSchema = z.discriminatedUnion("op", [
  z.strictObject({ op: z.literal("read"), path }),
  z.strictObject({ op: z.literal("list"), path }),
  z.strictObject({
    op: z.literal("write"),
    path,
    content: z.string().max(MAX_WRITE_BYTES * 2),
    encoding: z.enum(["utf8", "base64"]).default("utf8"),
  }),
]);

export type FileResult =
  | { ok: true; content: string; encoding: "utf8" | "base64"; bytes: number }
  | { ok: true; entries: Array<{ name: string; type: "file" | "dir" | "link" | "other" }>; truncated: boolean }
  | { ok: true; created: boolean; bytes: number }
  | { ok: false; error: string };

export interface PluginFileAccess {
  pluginId: string;
  /** plugin.json, named as the source of an allowed_paths refusal. */
  manifestFile: string;
  /** The manifest's allowed_paths (absolute). */
  allowedPaths: readonly string[];
  /** The plugin tool being called: the write journal names it (the runner names it in policy requests). */
  tool: string;
  /** Asks the tools policy (ToolContext.permit, its wait for approval off the plugin's clock). */
  permit(request: PermitRequest): Promise<unknown>;
  /** Where the write is journaled, and for which task. */
  ctx: Pick<ToolContext, "journalPath" | "taskId" | "sessionId" | "daemonFiles">;
}

/** Runs one `fs` request; throws ToolDenied when the manifest or the policy refuses the path. */
export async function pluginFileOp(raw: string, access: PluginFileAccess): Promise<FileResult> {
  let request: z.infer<typeof requestSchema>;
  try {
    request = requestSchema.parse(JSON.parse(raw));
  } catch (error) {
    const detail = error instanceof z.ZodError ? z.prettifyError(error) : (error as Error).message;
    return { ok: false, error: `bad fs request (want {"op":"read"|"list"|"write","path":...}): ${detail}` };
  }
  if (!isAbsolute(request.path)) return { ok: false, error: `path must be absolute: ${request.path}` };
  const write = request.op === "write";
  const resolved = resolveRequestPath(request.path, { cwd: "/", forWrite: write });
  if ("error" in resolved) return { ok: false, error: resolved.error };
  const target = resolved.path;
  const roots = access.allowedPaths.map((root) => resolvePolicyPath(root, "/"));
  if (!roots.some((root) => pathWithin(target, root))) {
    throw new ToolDenied(
      `plugin ${access.pluginId} allowed_paths`,
      access.manifestFile,
      `plugin ${access.pluginId} may only use files under its allowed_paths (${access.allowedPaths.join(", ") || "none"}); ${target} is outside`,
    );
  }
  await access.permit({ kind: write ? "write" : "read", path: target });
  try {
    switch (request.op) {
      case "read":
        return readWhole(target, access.ctx.daemonFiles);
      case "list":
        return list(target);
      case "write": {
        const data =
          request.encoding === "base64" ? Buffer.from(request.content, "base64") : Buffer.from(request.content);
        if (data.length > MAX_WRITE_BYTES)
          return { ok: false, error: `content is larger than ${MAX_WRITE_BYTES} bytes` };
        const written = writeApprovedFile(target, data, {
          tool: access.tool,
          journalPath: access.ctx.journalPath,
          taskId: access.ctx.taskId,
          sessionId: access.ctx.sessionId,
        });
        return { ok: true, ...written };
      }
    }
  } catch (error) {
    if (error instanceof ToolFailure) return { ok: false, error: error.message };
    throw error;
  }
}

/** The whole file: UTF-8 text as is, anything else as base64. */
function readWhole(target: string, daemonFiles: DaemonFiles): FileResult {
  const { fd, stat } = openApproved(target, constants.O_RDONLY);
  try {
    const refused = daemonFiles.openedRefusal(stat);
    if (refused !== null) throw protectedDenied(`${target}: ${refused}`);
    if (!stat.isFile()) return { ok: false, error: `${target} is ${fileKind(stat)}, not a regular file` };
    if (stat.size > MAX_PLUGIN_READ_BYTES) {
      return { ok: false, error: `${target} is ${stat.size} bytes; plugins may read up to ${MAX_PLUGIN_READ_BYTES}` };
    }
    const bytes = readAt(fd, 0, stat.size);
    try {
      const content = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
      return { ok: true, content, encoding: "utf8", bytes: bytes.length };
    } catch {
      return { ok: true, content: bytes.toString("base64"), encoding: "base64", bytes: bytes.length };
    }
  } finally {
    closeSync(fd);
  }
}

function list(target: string): FileResult {
  let entries: Dirent[];
  try {
    entries = readdirSync(target, { withFileTypes: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { ok: false, error: `${target} does not exist` };
    if (code === "ENOTDIR") return { ok: false, error: `${target} is not a directory` };
    return { ok: false, error: `cannot list ${target}: ${code ?? (error as Error).message}` };
  }
  const sorted = entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return {
    ok: true,
    entries: sorted.slice(0, MAX_LIST_ENTRIES).map((entry) => ({
      name: entry.name,
      type: entry.isFile() ? "file" : entry.isDirectory() ? "dir" : entry.isSymbolicLink() ? "link" : "other",
    })),
    truncated: sorted.length > MAX_LIST_ENTRIES,
  };
}
