import { z } from "zod";
import { MAX_WRITE_BYTES, writeApprovedFile } from "../fileWrite.ts";
import { resolveRequestPath } from "../policy/paths.ts";
import { defineTool, ToolFailure } from "../tool.ts";

export const writeFileTool = defineTool({
  name: "write_file",
  description:
    "Create or replace a text file with `content` (the whole new content). `path` is absolute or relative to the " +
    "assistant's working directory and must be in allowed_write_paths; missing parent directories are created. " +
    "The write is atomic and journaled; it may wait for the user's approval.",
  resource: "write",
  parameters: z.strictObject({
    path: z.string().min(1).max(4096).describe("The file to write"),
    content: z
      .string()
      .max(MAX_WRITE_BYTES)
      .refine((c) => Buffer.byteLength(c) <= MAX_WRITE_BYTES, `content is larger than ${MAX_WRITE_BYTES} bytes`)
      .describe("The complete new content of the file"),
  }),
  async execute(args, ctx) {
    const resolved = resolveRequestPath(args.path, { cwd: ctx.cwd, forWrite: true });
    if ("error" in resolved) throw new ToolFailure(resolved.error);
    const path = resolved.path;
    await ctx.permit({ kind: "write", path });
    const written = writeApprovedFile(path, args.content, {
      tool: "write_file",
      journalPath: ctx.journalPath,
      taskId: ctx.taskId,
      sessionId: ctx.sessionId,
    });
    return { text: `${written.created ? "Created" : "Replaced"} ${path} (${written.bytes} bytes).` };
  },
});
