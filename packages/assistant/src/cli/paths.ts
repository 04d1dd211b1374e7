import type { Command } from "commander";
import { locateRouterFile } from "../config/paths.ts";
import { type CliContext, output } from "./context.ts";

export function registerPathsCommand(program: Command, ctx: CliContext): void {
  program
    .command("paths")
    .description("print the data directory and the config file paths")
    .option("--json", "machine-readable output")
    .action((opts: { json?: boolean }) => {
      const p = ctx.paths;
      const files = {
        data_dir: p.dataDir,
        llm_router: locateRouterFile(p).path,
        tools_policy: p.toolsPolicy,
        assistant_env: p.assistantEnv,
        connectors_env: p.connectorsEnv,
        agent_profile: p.agentProfile,
        autonomous_mission: p.mission,
        voice_router: p.voiceRouter,
        skills_dir: p.skillsDir,
        database: p.database,
        vault: p.vaultFile,
        auth_token: p.authToken,
        daemon_info: p.daemonInfo,
        log_file: p.logFile,
        reports_dir: p.reportsDir,
        models_dir: p.modelsDir,
        plugins_dir: p.pluginsDir,
      };
      output(ctx, opts.json, files, () =>
        Object.entries(files)
          .map(([name, path]) => `${name.padEnd(19)} ${path}`)
          .join("\n"),
      );
    });
}
