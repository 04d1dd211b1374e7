import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DoctorCheck } from "@assistant/client";
import { afterAll } from "vitest";
import { parse } from "yaml";
import { cliBin } from "../helpers/daemon.ts";
import { filesAtRest } from "../helpers/files.ts";

export { freePort, modeOf } from "../helpers/system.ts";

// The setup tests drive the real `assistant` CLI as a child process, the way a person (or a script) would, each
// against its own fresh data directory.

const made: string[] = [];
afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

export interface Sandbox {
  root: string;
  dataDir: string;
  file(name: string): string;
  read(name: string): string;
  // biome-ignore lint/suspicious/noExplicitAny: parsed files are checked by the assertions that read them
  yaml(name: string): any;
  run(args: string[], options?: RunOptions): Promise<CliResult>;
}

export interface RunOptions {
  input?: string;
  env?: NodeJS.ProcessEnv;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  // biome-ignore lint/suspicious/noExplicitAny: same, for JSON output
  json<T = any>(): T;
}

/** A temp folder with `data/` (not created: commands must create it) and a `cwd/` to run from. */
export function sandbox(): Sandbox {
  const root = mkdtempSync(join(tmpdir(), "assistant-setup-"));
  made.push(root);
  const dataDir = join(root, "data");
  const cwd = join(root, "cwd"); // an empty working directory: no llm_router.yaml from the project root leaks in
  mkdirSync(cwd);
  const file = (name: string) => join(dataDir, name);
  return {
    root,
    dataDir,
    file,
    read: (name) => readFileSync(file(name), "utf8"),
    yaml: (name) => parse(readFileSync(file(name), "utf8")),
    run: (args, options = {}) =>
      runCli(args, { ...options, env: { ASSISTANT_DATA_DIR: dataDir, ...options.env }, cwd }),
  };
}

/** The environment of the test process without anything that would change the assistant's behaviour. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(ASSISTANT_|CLOUD_|MODEL_CACHE_HOME$|LOCAL_SERVER_HOST$|SEARCH_API_KEY$)/.test(key)) continue;
    env[key] = value;
  }
  return env;
}

export function runCli(args: string[], options: RunOptions & { cwd?: string } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliBin, ...args], {
      env: { ...cleanEnv(), ...options.env },
      cwd: options.cwd ?? tmpdir(),
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr, json: () => JSON.parse(stdout) }));
    child.stdin.on("error", () => {}); // the CLI may exit before reading its input
    child.stdin.end(options.input ?? "");
  });
}

/** Every file below `dir` with its text, to look for anything secret. */
export function allFileTexts(dir: string): Array<{ path: string; text: string }> {
  return filesAtRest(dir).map(({ path, bytes }) => ({ path, text: bytes.toString("latin1") }));
}

export type Check = DoctorCheck;

export function checkById(checks: Check[], id: string): Check {
  const check = checks.find((c) => c.id === id);
  if (!check) throw new Error(`no check ${id} in ${checks.map((c) => c.id).join(", ")}`);
  return check;
}

/**
 * Checks that depend on what this machine has installed (runtime, model), not on the data directory; the default
 * route answers with the embedded model, so whether it can answer depends on that model too.
 */
export const MACHINE_CHECKS = ["embedded.runtime", "embedded.model", "router.conversation"];
