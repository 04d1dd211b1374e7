import { closeSync, constants } from "node:fs";
import { z } from "zod";
import { fileKind, openApproved, readAt } from "../files.ts";
import { resolveRequestPath } from "../policy/paths.ts";
import { defineTool, protectedDenied, ToolFailure } from "../tool.ts";

/** Files up to this size are read whole; larger ones show their start and end. */
const WHOLE_FILE_BYTES = 2 * 1024 * 1024;
const PART_BYTES = 64 * 1024;
const BINARY_PROBE_BYTES = 8192;

export const readFileTool = defineTool({
  name: "read_file",
  description:
    "Read a text file. `path` is absolute or relative to the assistant's working directory; only paths in " +
    "allowed_read_paths can be read. Use list_dir to see a directory and search to find text in many files.",
  resource: "read",
  parameters: z.strictObject({
    path: z.string().min(1).max(4096).describe("The file to read"),
  }),
  async execute(args, ctx) {
    const resolved = resolveRequestPath(args.path, { cwd: ctx.cwd });
    if ("error" in resolved) throw new ToolFailure(resolved.error);
    const path = resolved.path;
    await ctx.permit({ kind: "read", path });
    const { fd, stat } = openApproved(path, constants.O_RDONLY);
    try {
      const refused = ctx.daemonFiles.openedRefusal(stat);
      if (refused !== null) throw protectedDenied(`${path}: ${refused}`);
      if (stat.isDirectory()) throw new ToolFailure(`${path} is a directory; use list_dir to see what it holds`);
      if (!stat.isFile()) throw new ToolFailure(`${path} is ${fileKind(stat)}, not a regular file`);
      const probe = readAt(fd, 0, Math.min(stat.size, BINARY_PROBE_BYTES));
      if (probe.includes(0))
        return { text: `${path} is a binary file (${stat.size} bytes); its content is not shown.` };
      if (stat.size <= WHOLE_FILE_BYTES) {
        return { text: readAt(fd, 0, stat.size).toString("utf8"), untrusted: `file ${path}` };
      }
      const head = readAt(fd, 0, PART_BYTES).toString("utf8");
      const tail = readAt(fd, stat.size - PART_BYTES, PART_BYTES).toString("utf8");
      const cut = stat.size - 2 * PART_BYTES;
      return {
        text: `${head}\n[... ${cut} bytes of a ${stat.size}-byte file not read ...]\n${tail}`,
        untrusted: `file ${path}`,
      };
    } finally {
      closeSync(fd);
    }
  },
});
