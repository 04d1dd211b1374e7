import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readSettingsOf } from "../config/settings.ts";
import { type ResolvedEmbeddedModel, resolveEmbeddedModel } from "../llm/embedded/catalogue.ts";
import { ggufProblem } from "../llm/embedded/runtime.ts";
import { EMBEDDED_MODEL_SETTINGS } from "../llm/settings.ts";
import { ConfigError } from "../util/errors.ts";
import { type CheckContext, type CheckResult, result } from "./types.ts";

// The embedded model needs two things: the llama.cpp runtime (the node-llama-cpp package) and a GGUF weights
// file. Neither stops the daemon from starting (chats fall through to assistant_core), so both are warnings,
// and both report what is really there: a package that does not resolve is "not installed", never "ok".

export const RUNTIME_PACKAGE = "node-llama-cpp";

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
  let model: ResolvedEmbeddedModel;
  try {
    model = resolveEmbeddedModel(readSettingsOf(ctx.env, EMBEDDED_MODEL_SETTINGS), ctx.paths);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return result("embedded.model", title, "fail", error.message, {
      fix: `set ${error.key} to what the message says, or unset it (the default model is qwen3_0_6b)`,
      fixable: false,
    });
  }
  if (!existsSync(model.path)) {
    if (model.custom) {
      return result(
        "embedded.model",
        title,
        "fail",
        `ASSISTANT_EMBEDDED_MODEL_PATH names ${model.path}, which does not exist`,
        {
          fix: "point ASSISTANT_EMBEDDED_MODEL_PATH at a GGUF file",
          fixable: false,
        },
      );
    }
    const size = model.size_bytes ? ` (${Math.round(model.size_bytes / 1e6)} MB)` : "";
    return result(
      "embedded.model",
      title,
      "warn",
      `${model.model_id} is not downloaded yet${size}; until it is, chats use the next route and finally the built-in core`,
      { fix: "run `assistant config models embedded-download` (it also downloads on first use)", fixable: false },
    );
  }
  const problem = ggufProblem(model.path);
  if (problem) {
    const source = model.custom ? "ASSISTANT_EMBEDDED_MODEL_PATH names" : `the ${model.model_id} model file is`;
    return result(
      "embedded.model",
      title,
      "fail",
      `${source} ${model.path}, which is not a usable GGUF file: ${problem}`,
      {
        fix: model.custom
          ? "point ASSISTANT_EMBEDDED_MODEL_PATH at a GGUF file"
          : `delete ${model.path} and run \`assistant config models embedded-download\``,
        fixable: false,
      },
    );
  }
  return result(
    "embedded.model",
    title,
    "ok",
    `${model.model_id}: ${model.path}${model.custom ? " (ASSISTANT_EMBEDDED_MODEL_PATH)" : ""}`,
  );
}
