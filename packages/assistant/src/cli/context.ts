import type { Readable, Writable } from "node:stream";
import { type DataPaths, dataPaths, resolveDataDir } from "../config/paths.ts";

/** What every CLI command gets: where the data lives and where to read and write. Tests pass their own. */
export interface CliContext {
  env: NodeJS.ProcessEnv;
  paths: DataPaths;
  stdin: Readable & { isTTY?: boolean };
  stdout: Writable;
  stderr: Writable;
}

export function defaultContext(): CliContext {
  return {
    env: process.env,
    paths: dataPaths(resolveDataDir(process.env)),
    // A getter: building process.stdin costs a few ms, and only the commands that read it need it.
    get stdin() {
      return process.stdin;
    },
    stdout: process.stdout,
    stderr: process.stderr,
  };
}

/** Prints `value` as JSON when --json was given, else the human text. */
export function output(ctx: CliContext, json: boolean | undefined, value: unknown, human: () => string): void {
  ctx.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${human()}\n`);
}

/** Reads all of standard input (used by `vault set KEY` and `config env set KEY` without a value). */
export async function readStdin(ctx: CliContext): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.stdin) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks)
    .toString("utf8")
    .replace(/\r?\n$/, "");
}
