import { defaultContext } from "../cli/context.ts";
import { runCli } from "../cli/program.ts";

process.exitCode = await runCli(process.argv.slice(2), defaultContext());
