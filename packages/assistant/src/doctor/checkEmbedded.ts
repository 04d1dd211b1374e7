import { spawn } from "node:child_process";
import {
  closeSync,
  type Dirent,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type CheckContext, type CheckResult, result } from "./types.ts";

// The embedded model needs two things: the llama.cpp runtime (the node-llama-cpp package) and a GGUF weights
// file. Neither stops the daemon from starting (chats fall through to assistant_core), so both are warnings,
// and both report what is really there: a package that does not resolve is "not installed", never "ok".

export const RUNTIME_PACKAGE = "node-llama-cpp";
const GGUF_MAGIC = "GGUF";

const LOAD_TIMEOUT_MS = 30_000;

// Loads the prebuilt llama.cpp binary in a child process: a broken native binary may abort the process that loads
// it, and doctor must survive to report it. `build: "never"` so a check never starts a source build.
const LOAD_SCRIPT = `
const { getLlama, LlamaLogLevel } = await import(process.argv[2]);
const llama = await getLlama({ build: "never", gpu: false, logLevel: LlamaLogLevel.error });
process.stdout.write(JSON.stringify({ cpu: llama.cpuMathCores, release: llama.llamaCppRelease.release }));
await llama.dispose();
`;

export async function checkEmbeddedRuntime(): Promise<CheckResult> {
  const title = "embedded runtime";
  let where: string;
  try {
    where = import.meta.resolve(RUNTIME_PACKAGE);
  } catch {
    return result(
      "embedded.runtime",
      title,
      "warn",
      `embedded runtime not installed (${RUNTIME_PACKAGE} cannot be found): chats use the other routes, and the built-in core answers last`,
      { fix: "run `npm install` in the project folder", fixable: false },
    );
  }
  // From a file, not `-e`: node-llama-cpp forks a binary test with this process's exec arguments.
  const dir = mkdtempSync(join(tmpdir(), "assistant-doctor-"));
  const script = join(dir, "load-llama.mjs");
  writeFileSync(script, LOAD_SCRIPT);
  const run = await runNode([script, where]).finally(() => rmSync(dir, { recursive: true, force: true }));
  if (run.code === 0) {
    const info = JSON.parse(run.stdout) as { cpu: number; release: string };
    return result(
      "embedded.runtime",
      title,
      "ok",
      `llama.cpp ${info.release} loads (prebuilt, CPU, ${info.cpu} math cores)`,
    );
  }
  const reason = run.stderr.trim().split("\n").slice(-3).join(" ") || `exit ${run.code}`;
  return result("embedded.runtime", title, "warn", `${RUNTIME_PACKAGE} is installed but does not load: ${reason}`, {
    fix: "reinstall with `npm install`; this platform may lack a prebuilt llama.cpp binary",
    fixable: false,
  });
}

function runNode(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"], timeout: LOAD_TIMEOUT_MS });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", (error) => resolve({ code: null, stdout, stderr: error.message }));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
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
