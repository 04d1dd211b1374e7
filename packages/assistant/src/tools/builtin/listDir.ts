import { lstatSync, readdirSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { plural } from "../../util/plural.ts";
import { resolveRequestPath } from "../policy/paths.ts";
import { defineTool, ToolFailure } from "../tool.ts";

const MAX_ENTRIES = 1000;

export const listDirTool = defineTool({
  name: "list_dir",
  description:
    "List a directory: one entry per line, directories end with `/`, files show their size, links their target. " +
    "`path` is absolute or relative to the assistant's working directory and must be in allowed_read_paths.",
  resource: "read",
  parameters: z.strictObject({
    path: z.string().min(1).max(4096).describe("The directory to list"),
  }),
  async execute(args, ctx) {
    const resolved = resolveRequestPath(args.path, { cwd: ctx.cwd });
    if ("error" in resolved) throw new ToolFailure(resolved.error);
    const path = resolved.path;
    await ctx.permit({ kind: "read", path });
    let names: string[];
    try {
      names = readdirSync(path).sort();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT") throw new ToolFailure(`${path} does not exist`);
      if (code === "ENOTDIR") throw new ToolFailure(`${path} is not a directory; use read_file to read it`);
      throw new ToolFailure(`cannot list ${path}: ${code ?? (error as Error).message}`);
    }
    if (names.length === 0) return { text: `${path} is empty.` };
    const lines = names.slice(0, MAX_ENTRIES).map((name) => describe(path, name));
    if (names.length > MAX_ENTRIES) lines.push(`[... ${names.length - MAX_ENTRIES} more entries not listed ...]`);
    return {
      text: `${path} (${plural(names.length, "entry", "entries")}):\n${lines.join("\n")}`,
      untrusted: `directory listing ${path}`,
    };
  },
});

function describe(dir: string, name: string): string {
  const full = join(dir, name);
  try {
    const stat = lstatSync(full);
    if (stat.isDirectory()) return `${name}/`;
    if (stat.isSymbolicLink()) return `${name} -> ${readlinkSync(full)}`;
    if (stat.isFile()) return `${name}  ${stat.size} bytes`;
    return `${name}  (special file)`;
  } catch {
    return `${name}  (vanished)`;
  }
}
