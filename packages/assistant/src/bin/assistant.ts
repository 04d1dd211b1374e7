import { enableBundleCompileCache } from "./compileCache.ts";

enableBundleCompileCache();
// A reader that went away (`assistant chat "..." | head -c 5`) ends the command quietly, as it ends `cat`; any
// other stream error still surfaces.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
    process.exit(0);
  });
}
const [{ runCli }, { defaultContext }] = await Promise.all([import("../cli/program.ts"), import("../cli/context.ts")]);
process.exitCode = await runCli(process.argv.slice(2), defaultContext());
