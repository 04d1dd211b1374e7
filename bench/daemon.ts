// A real daemon for the benches: its own data directory with the given llm_router.yaml, a free port, quiet logs.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const daemonEntry = join(resolve(import.meta.dirname, ".."), "packages", "assistant", "bin", "assistant-daemon.mjs");

export interface BenchDaemon {
  url: string;
  token: string;
  pid: number;
  /** What the daemon wrote to stderr so far (the last 64 KB): the inspector's address, warnings. */
  stderr(): string;
  stop(): Promise<void>;
}

export async function startBenchDaemon(
  name: string,
  routerYaml: string,
  env: NodeJS.ProcessEnv = {},
  /** Node options before the entry (--inspect=127.0.0.1:0, --cpu-prof, ...). */
  nodeArgs: string[] = [],
): Promise<BenchDaemon> {
  const dataDir = mkdtempSync(join(tmpdir(), `assistant-bench-${name}-`));
  writeFileSync(join(dataDir, "llm_router.yaml"), routerYaml);
  const daemon: ChildProcess = spawn(process.execPath, [...nodeArgs, daemonEntry], {
    env: { ...process.env, ASSISTANT_DATA_DIR: dataDir, ASSISTANT_PORT: "0", ASSISTANT_LOG: "warn", ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  daemon.stderr!.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-65_536);
  });
  const infoFile = join(dataDir, "daemon.json");
  while (!existsSync(infoFile)) await new Promise((r) => setTimeout(r, 20));
  const { port } = JSON.parse(readFileSync(infoFile, "utf8")) as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    token: readFileSync(join(dataDir, "auth_token"), "utf8").trim(),
    pid: daemon.pid!,
    stderr: () => stderr,
    stop: async () => {
      daemon.kill("SIGTERM");
      await new Promise((r) => daemon.once("exit", r));
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** llm_router.yaml sending the given task types to an OpenAI-protocol server as lowbit_server/bench-model. */
export function benchRouterYaml(serverUrl: string, taskTypes: string[]): string {
  const routes = taskTypes.map((t) => `  ${t}:\n    primary: {provider: lowbit_server, model: bench-model}\n`).join("");
  return `providers:\n  lowbit_server:\n    base_url: ${serverUrl}/v1\ntask_types:\n${routes}`;
}
