import { enableBundleCompileCache } from "./compileCache.ts";

enableBundleCompileCache();
const [{ runCli }, { defaultContext }] = await Promise.all([import("../cli/program.ts"), import("../cli/context.ts")]);
process.exitCode = await runCli(process.argv.slice(2), defaultContext());
