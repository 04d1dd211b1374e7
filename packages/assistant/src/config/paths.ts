import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";

/** Every file and folder the assistant keeps in its data directory (docs/configuration.md). */
export interface DataPaths {
  dataDir: string;
  routerFile: string;
  toolsPolicy: string;
  assistantEnv: string;
  connectorsEnv: string;
  agentProfile: string;
  mission: string;
  voiceRouter: string;
  skillsDir: string;
  database: string;
  vaultFile: string;
  vaultKey: string;
  authToken: string;
  daemonInfo: string;
  logsDir: string;
  logFile: string;
  reportsDir: string;
  modelsDir: string;
  pluginsDir: string;
  /** Tasks' working directories (run_command_default_cwd_workspace). */
  workspaceDir: string;
  /** Default ASSISTANT_TOOLS_JOURNAL_PATH: one JSON line per file write by a tool. */
  toolsJournal: string;
}

/**
 * `ASSISTANT_DATA_DIR`, else `~/assistant`. On Windows the home directory is the user-profile folder, so the
 * default there is `%USERPROFILE%\assistant`.
 */
export function resolveDataDir(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env.ASSISTANT_DATA_DIR?.trim();
  if (configured) return isAbsolute(configured) ? configured : resolve(configured);
  const home = process.platform === "win32" ? (env.USERPROFILE ?? homedir()) : homedir();
  return join(home, "assistant");
}

export function dataPaths(dataDir: string): DataPaths {
  const at = (...parts: string[]) => join(dataDir, ...parts);
  return {
    dataDir,
    routerFile: at("llm_router.yaml"),
    toolsPolicy: at("tools_policy.yaml"),
    assistantEnv: at("assistant.env"),
    connectorsEnv: at("connectors.env"),
    agentProfile: at("agent_profile.json"),
    mission: at("autonomous_mission.yaml"),
    voiceRouter: at("voice_router.yaml"),
    skillsDir: at("skills"),
    database: at("assistant.db"),
    vaultFile: at("vault.json"),
    vaultKey: at("vault.key"),
    authToken: at("auth_token"),
    daemonInfo: at("daemon.json"),
    logsDir: at("logs"),
    logFile: at("logs", "daemon.log"),
    reportsDir: at("reports"),
    modelsDir: at("models"),
    pluginsDir: at("plugins"),
    workspaceDir: at("workspace"),
    toolsJournal: at("logs", "tools_journal.jsonl"),
  };
}

/**
 * `llm_router.yaml` is looked up in the data directory first, then in the project root (the daemon's working
 * directory). Returns the data-dir path when neither exists, which is where edits create it.
 */
export function locateRouterFile(
  paths: DataPaths,
  projectRoot: string = process.cwd(),
): { path: string; exists: boolean } {
  if (existsSync(paths.routerFile)) return { path: paths.routerFile, exists: true };
  const fromProject = join(projectRoot, "llm_router.yaml");
  if (existsSync(fromProject)) return { path: fromProject, exists: true };
  return { path: paths.routerFile, exists: false };
}
