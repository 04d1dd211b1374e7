import { createHash, randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  fsyncSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { z } from "zod";
import { descriptorPath, openApproved } from "../files.ts";
import { appendJournal } from "../journal.ts";
import { resolveRequestPath } from "../policy/paths.ts";
import { defineTool, ToolFailure } from "../tool.ts";

export const MAX_WRITE_BYTES = 5 * 1024 * 1024;

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
    await ctx.permit({ kind: "write", tool: "write_file", path });
    const previous = existing(path);
    const dir = dirname(path);
    try {
      mkdirSync(dir, { recursive: true });
    } catch (error) {
      throw new ToolFailure(
        `cannot create ${dir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      );
    }
    const data = Buffer.from(args.content, "utf8");
    const temp = join(dir, `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`);
    const { fd } = openApproved(
      temp,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL,
      previous?.mode ?? 0o644,
    );
    try {
      // The new file must sit in the approved directory: a parent swapped for a link after the check is caught.
      const actual = descriptorPath(fd);
      if (actual !== null && dirname(actual) !== dir) throw new ToolFailure(`${dir} changed during the write; refused`);
      let done = 0;
      while (done < data.length) done += writeSync(fd, data, done, data.length - done);
      fsyncSync(fd);
      closeSync(fd);
      renameSync(temp, path);
    } catch (error) {
      try {
        closeSync(fd);
      } catch {
        // already closed
      }
      rmSync(temp, { force: true });
      if (error instanceof ToolFailure) throw error;
      throw new ToolFailure(
        `cannot write ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      );
    }
    const sha256 = createHash("sha256").update(data).digest("hex");
    appendJournal(ctx.journalPath, {
      tool: "write_file",
      path,
      bytes: data.length,
      sha256,
      previous_sha256: previous?.sha256 ?? null,
      created: previous === null,
      task_id: ctx.taskId ?? null,
      session_id: ctx.sessionId ?? null,
    });
    return { text: `${previous ? "Replaced" : "Created"} ${path} (${data.length} bytes).` };
  },
});

function existing(path: string): { mode: number; sha256: string } | null {
  let stat: ReturnType<typeof lstatSync>;
  try {
    stat = lstatSync(path);
  } catch {
    return null;
  }
  if (stat.isDirectory()) throw new ToolFailure(`${path} is a directory`);
  if (!stat.isFile()) throw new ToolFailure(`${path} is not a regular file`);
  const sha256 = createHash("sha256").update(readFileSync(path)).digest("hex");
  return { mode: stat.mode & 0o777, sha256 };
}
