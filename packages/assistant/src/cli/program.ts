import { Command, CommanderError } from "commander";
import { isAppError } from "../util/errors.ts";
import { VERSION } from "../version.ts";
import type { CliContext } from "./context.ts";

type Registration = (program: Command, ctx: CliContext) => void;

/** One area's file and the top-level commands it registers (or adds subcommands to). */
export interface CommandArea {
  commands: readonly string[];
  load: () => Promise<Registration>;
}

// Each area registers its commands from its own file, loaded only when the command line names one of its
// commands: `assistant start --foreground` loads daemon.ts, not the 14 other areas (commander alone is ~100 KB).
// In this order for `--help`; setup.ts and models.ts both add to `config`. Registration stays light too: command
// files import their services inside actions, so `assistant paths` loads neither the HTTP server nor SQLite.
export const COMMAND_AREAS: readonly CommandArea[] = [
  { commands: ["paths"], load: async () => (await import("./paths.ts")).registerPathsCommand },
  {
    commands: ["start", "restart", "stop", "up", "status"],
    load: async () => (await import("./daemon.ts")).registerDaemonCommands,
  },
  { commands: ["open"], load: async () => (await import("./open.ts")).registerOpenCommand },
  { commands: ["vault"], load: async () => (await import("./vault.ts")).registerVaultCommands },
  { commands: ["init", "doctor", "config"], load: async () => (await import("./setup.ts")).registerSetupCommands },
  { commands: ["config"], load: async () => (await import("./models.ts")).registerModelsCommands },
  { commands: ["router", "discover"], load: async () => (await import("./router.ts")).registerRouterCommands },
  { commands: ["chat"], load: async () => (await import("./chat.ts")).registerChatCommand },
  { commands: ["permissions"], load: async () => (await import("./permissions.ts")).registerPermissionsCommands },
  { commands: ["toolset"], load: async () => (await import("./toolset.ts")).registerToolsetCommands },
  { commands: ["skill"], load: async () => (await import("./skill.ts")).registerSkillCommands },
  { commands: ["plugin"], load: async () => (await import("./plugin.ts")).registerPluginCommands },
  { commands: ["task"], load: async () => (await import("./task.ts")).registerTaskCommands },
  { commands: ["schedule"], load: async () => (await import("./schedule.ts")).registerScheduleCommands },
  { commands: ["memory"], load: async () => (await import("./memory.ts")).registerMemoryCommands },
  { commands: ["mission"], load: async () => (await import("./mission.ts")).registerMissionCommands },
  { commands: ["budget"], load: async () => (await import("./budget.ts")).registerBudgetCommands },
];

/**
 * The areas a command line needs: those of the command it names. Anything else (no command, `--help`,
 * `--version`, `help`, a typo) gets every area, so the help and the "did you mean" suggestions list them all.
 */
export function areasFor(argv: readonly string[]): readonly CommandArea[] {
  const name = argv[0];
  const named = name === undefined ? [] : COMMAND_AREAS.filter((area) => area.commands.includes(name));
  return named.length > 0 ? named : COMMAND_AREAS;
}

/** The program with the commands `argv` needs (see areasFor); every command when `argv` is not given. */
export async function buildProgram(ctx: CliContext, argv: readonly string[] = []): Promise<Command> {
  const program = new Command("assistant")
    .description("Privacy-first personal AI assistant: CLI of the assistant daemon.")
    .version(VERSION, "-v, --version")
    .showHelpAfterError("(run `assistant --help` for the list of commands)")
    .configureOutput({
      writeOut: (text) => ctx.stdout.write(text),
      writeErr: (text) => ctx.stderr.write(text),
    })
    .exitOverride();
  const registrations = await Promise.all(areasFor(argv).map((area) => area.load()));
  for (const register of registrations) register(program, ctx);
  for (const command of program.commands) pointToHelp(command.exitOverride(), `assistant ${command.name()}`);
  return program;
}

/** A usage error (exit 2) ends with the help that has the usage: that of the command, or group, that refused it. */
function pointToHelp(command: Command, path: string): void {
  command.showHelpAfterError(`(run \`${path} --help\` for its usage)`);
  for (const sub of command.commands) pointToHelp(sub, `${path} ${sub.name()}`);
}

/** Runs the CLI and returns the exit code: 0 ok, 1 failure, 2 usage error. */
export async function runCli(argv: string[], ctx: CliContext): Promise<number> {
  const program = await buildProgram(ctx, argv);
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
