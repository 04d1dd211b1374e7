import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import { startDaemon, type TestDaemon, tempDataDir } from "../helpers/daemon.ts";

/**
 * A daemon for tests that script every model call in order: no embedded model file, and memory learning (a model
 * call of its own after each reply, test/memory covers it) off so it takes none of the scripted answers.
 */
export function startScriptedDaemon(
  dataDir: string,
  env: NodeJS.ProcessEnv = {},
  options: { cwd?: string } = {},
): Promise<TestDaemon> {
  return startDaemon(
    { ASSISTANT_MEMORY_LEARNING: "0", ASSISTANT_EMBEDDED_MODEL_PATH: join(dataDir, "no-such-model.gguf"), ...env },
    dataDir,
    options,
  );
}

// llm_router.yaml for agent tests: every listed task type routes to the scripted OpenAI-protocol server
// (test/llm/servers/openaiServer.ts) as lowbit_server, with a model name per task type so requests can be told
// apart by `body.model`.
export function scriptedRouterYaml(
  url: string,
  models: Record<string, string> = { conversation: "chat-model" },
): string {
  const routes = Object.entries(models)
    .map(([taskType, model]) => `  ${taskType}:\n    primary: {provider: lowbit_server, model: ${model}}\n`)
    .join("");
  return `providers:\n  lowbit_server:\n    base_url: ${url}/v1\ntask_types:\n${routes}`;
}

/**
 * A fresh data directory for an agent daemon: llm_router.yaml routed to the scripted server and a tools policy
 * that allows reads and writes in `work`, writes needing approval.
 */
export function agentDataDir(url: string, work: string, models?: Record<string, string>): string {
  const dataDir = tempDataDir();
  writeFileSync(join(dataDir, "llm_router.yaml"), scriptedRouterYaml(url, models));
  writeFileSync(
    join(dataDir, "tools_policy.yaml"),
    stringify({ allowed_read_paths: [work], allowed_write_paths: [work], require_approval: ["write_file"] }),
  );
  return dataDir;
}
