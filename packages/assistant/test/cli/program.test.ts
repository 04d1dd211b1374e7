import { PassThrough } from "node:stream";
import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import type { CliContext } from "../../src/cli/context.ts";
import { areasFor, buildProgram, COMMAND_AREAS } from "../../src/cli/program.ts";
import { dataPaths } from "../../src/config/paths.ts";
import { runCli, sandbox } from "../setup/helpers.ts";

// The CLI loads only the command area the command line names (cli/program.ts): `assistant start --foreground`
// must not load 14 other areas. These tests keep that from changing what people see: every command is still
// listed and still parsed exactly as when every area is loaded.

function context(): CliContext {
  return {
    env: {},
    paths: dataPaths("/nonexistent/assistant-data"),
    stdin: new PassThrough(),
    stdout: new PassThrough(),
    stderr: new PassThrough(),
  };
}

/** Every command and subcommand with its full help text, by path ("config models set"). */
function helpByPath(command: Command, prefix = ""): Map<string, string> {
  const help = new Map<string, string>();
  for (const sub of command.commands) {
    const path = `${prefix}${sub.name()}`;
    help.set(path, sub.helpInformation());
    for (const [p, h] of helpByPath(sub, `${path} `)) help.set(p, h);
  }
  return help;
}

describe("command areas loaded on demand", () => {
  it("a command line naming a command builds it exactly as the full program does", async () => {
    const full = await buildProgram(context());
    const fullHelp = helpByPath(full);
    expect(full.commands.length).toBeGreaterThanOrEqual(20);
    for (const command of full.commands) {
      // Listed in COMMAND_AREAS (else it would load every area: right, but slow).
      expect(areasFor([command.name()]), command.name()).not.toBe(COMMAND_AREAS);
      const partial = await buildProgram(context(), [command.name()]);
      const partialHelp = helpByPath(partial);
      // Every subcommand under it, same options, arguments and descriptions.
      for (const [path, help] of fullHelp) {
        if (path === command.name() || path.startsWith(`${command.name()} `)) {
          expect(partialHelp.get(path), `assistant ${path}`).toBe(help);
        }
      }
    }
  });

  it("`start --foreground` loads the daemon commands only; help, version, typos and nothing load every area", () => {
    const daemonArea = COMMAND_AREAS.find((area) => area.commands.includes("start"));
    expect(areasFor(["start", "--foreground"])).toEqual([daemonArea]);
    expect(areasFor(["config", "models", "get"])).toHaveLength(2); // setup.ts and models.ts both add to `config`
    for (const argv of [[], ["--help"], ["-v"], ["help", "start"], ["strat"]]) {
      expect(areasFor(argv), argv.join(" ")).toBe(COMMAND_AREAS);
    }
  });

  it("`assistant --help` lists every command", async () => {
    const names = (await buildProgram(context())).commands.map((command) => command.name());
    const result = await runCli(["--help"]);
    expect(result.code).toBe(0);
    const commands = result.stdout.slice(result.stdout.indexOf("Commands:"));
    const listed = [...commands.matchAll(/^ {2}([a-z-]+)/gm)].map((m) => m[1]);
    expect(listed).toEqual([...names, "help"]);
  });

  it("a mistyped command is still a usage error with the closest command suggested", async () => {
    const result = await runCli(["strat"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("unknown command 'strat'");
    expect(result.stderr).toContain("Did you mean start?");
  });

  it("each area's commands run through the real CLI", async () => {
    const box = sandbox();
    const down = /daemon is not running|no daemon is running/;
    // [arguments, exit code, what it says]: local commands work without a daemon, the others say it is down.
    const runs: Array<[string[], number, RegExp]> = [
      [["paths", "--json"], 0, /"data_dir"/],
      [["status"], 1, down],
      [["vault", "list"], 0, /the vault is empty/],
      [["config", "validate"], 0, /llm_router\.yaml/],
      [["config", "models", "routes"], 0, /conversation \(default\)\s+assistant_embedded/],
      [["toolset", "profiles"], 0, /tools_policy\.yaml is missing/],
      [["router", "show", "qwen"], 1, /./],
      [["task", "list"], 1, down],
      [["memory", "overview"], 1, down],
      [["schedule", "list"], 1, down],
      [["skill", "list"], 1, down],
      [["plugin", "list"], 1, down],
      [["permissions", "queue", "list"], 1, down],
      [["chat", "hello"], 1, down],
      [["open", "--print"], 1, down],
    ];
    for (const [args, code, says] of runs) {
      const result = await box.run(args);
      expect(result.stderr, args.join(" ")).not.toMatch(/unknown command|unknown option|missing required/);
      expect(result.code, args.join(" ")).toBe(code);
      expect(`${result.stdout}${result.stderr}`, args.join(" ")).toMatch(says);
    }
  }, 120_000);
});
