import { Command, CommanderError } from "commander";
import { isAppError } from "../util/errors.ts";
import { VERSION } from "../version.ts";
import { registerChatCommand } from "./chat.ts";
import type { CliContext } from "./context.ts";
import { registerDaemonCommands } from "./daemon.ts";
import { registerMemoryCommands } from "./memory.ts";
import { registerModelsCommands } from "./models.ts";
import { registerOpenCommand } from "./open.ts";
import { registerPathsCommand } from "./paths.ts";
import { registerPermissionsCommands } from "./permissions.ts";
import { registerPluginCommands } from "./plugin.ts";
import { registerRouterCommands } from "./router.ts";
import { registerScheduleCommands } from "./schedule.ts";
import { registerSetupCommands } from "./setup.ts";
import { registerSkillCommands } from "./skill.ts";
import { registerTaskCommands } from "./task.ts";
import { registerToolsetCommands } from "./toolset.ts";
import { registerVaultCommands } from "./vault.ts";

// Each area registers its commands from its own file. Registration stays light: command files import their
// services lazily inside actions, so `assistant paths` does not load the HTTP server or SQLite.
const registrations: Array<(program: Command, ctx: CliContext) => void> = [
  registerPathsCommand,
  registerDaemonCommands,
  registerOpenCommand,
  registerVaultCommands,
  registerSetupCommands,
  registerModelsCommands,
  registerRouterCommands,
  registerChatCommand,
  registerPermissionsCommands,
  registerToolsetCommands,
  registerSkillCommands,
  registerPluginCommands,
  registerTaskCommands,
  registerScheduleCommands,
  registerMemoryCommands,
];

export function buildProgram(ctx: CliContext): Command {
  const program = new Command("assistant")
    .description("Privacy-first personal AI assistant: CLI of the assistant daemon.")
    .version(VERSION, "-v, --version")
    .showHelpAfterError("(run `assistant --help` for the list of commands)")
    .configureOutput({
      writeOut: (text) => ctx.stdout.write(text),
      writeErr: (text) => ctx.stderr.write(text),
    })
    .exitOverride();
  for (const register of registrations) register(program, ctx);
  for (const command of program.commands) command.exitOverride().showHelpAfterError();
  return program;
}

/** Runs the CLI and returns the exit code: 0 ok, 1 failure, 2 usage error. */
export async function runCli(argv: string[], ctx: CliContext): Promise<number> {
  const program = buildProgram(ctx);
  try {
    await program.parseAsync(argv, { from: "user" });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      const ok = error.code === "commander.helpDisplayed" || error.code === "commander.version" || error.exitCode === 0;
      return ok ? 0 : 2;
    }
    if (isAppError(error)) {
      ctx.stderr.write(`error: ${error.message}\n`);
      return 1;
    }
    ctx.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}
