import { closeSync, type Dirent, existsSync, openSync, readdirSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import { type CheckContext, type CheckResult, result } from "./types.ts";

// The embedded model needs two things: the llama.cpp runtime (the node-llama-cpp package) and a GGUF weights
// file. Neither stops the daemon from starting (chats fall through to assistant_core), so both are warnings,
// and both report what is really there: a package that does not resolve is "not installed", never "ok".

export const RUNTIME_PACKAGE = "node-llama-cpp";
const GGUF_MAGIC = "GGUF";

export function checkEmbeddedRuntime(): CheckResult {
  const title = "embedded runtime";
  try {
    const where = import.meta.resolve(RUNTIME_PACKAGE);
    return result("embedded.runtime", title, "ok", `${RUNTIME_PACKAGE} is installed (${where})`);
  } catch {
    return result(
      "embedded.runtime",
      title,
      "warn",
      `embedded runtime not installed (${RUNTIME_PACKAGE} cannot be found): chats use the other routes, and the built-in core answers last`,
      {
        fix: `run \`npm install\` in the project folder; if ${RUNTIME_PACKAGE} is still missing, this build does not include the embedded runtime yet`,
        fixable: false,
      },
    );
  }
}

export function checkEmbeddedModel(ctx: CheckContext): CheckResult {
  const title = "embedded model";
  const configured = ctx.env.ASSISTANT_EMBEDDED_MODEL_PATH?.trim();
  if (configured) {
    const problem = !existsSync(configured)
      ? "does not exist"
      : !statSync(configured).isFile()
        ? "is not a file"
        : !isGguf(configured)
          ? `is not a GGUF file (it does not start with "${GGUF_MAGIC}")`
          : undefined;
    if (!problem) return result("embedded.model", title, "ok", `${configured} (ASSISTANT_EMBEDDED_MODEL_PATH)`);
    return result(
      "embedded.model",
      title,
      "fail",
      `ASSISTANT_EMBEDDED_MODEL_PATH names ${configured}, which ${problem}`,
      {
        fix: "point ASSISTANT_EMBEDDED_MODEL_PATH at a GGUF file",
        fixable: false,
      },
    );
  }
  const dirs = [
    ...new Set([ctx.env.MODEL_CACHE_HOME?.trim(), ctx.paths.modelsDir].filter((d): d is string => Boolean(d))),
  ];
  const found = dirs.flatMap((dir) => ggufFiles(dir, 2)).find(isGguf);
  if (found) return result("embedded.model", title, "ok", found);
  const model = ctx.env.ASSISTANT_EMBEDDED_MODEL?.trim() || "qwen3_0_6b";
  return result(
    "embedded.model",
    title,
    "warn",
    `no GGUF model in ${dirs.join(" or ")} for the embedded model (${model})`,
    {
      fix: `place a GGUF file in ${dirs.at(-1)}, or set ASSISTANT_EMBEDDED_MODEL_PATH to one`,
      fixable: false,
    },
  );
}

/** *.gguf files in `dir` and its subfolders down to `depth` levels (model caches nest one folder per model). */
function ggufFiles(dir: string, depth: number): string[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isFile() && entry.name.toLowerCase().endsWith(".gguf")) out.push(path);
    else if (entry.isDirectory() && depth > 0) out.push(...ggufFiles(path, depth - 1));
  }
  return out.sort();
}

function isGguf(path: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
    const head = Buffer.alloc(4);
    return readSync(fd, head, 0, 4, 0) === 4 && head.toString("latin1") === GGUF_MAGIC;
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
