import { enableBundleCompileCache } from "./compileCache.ts";

// Started detached by `assistant start`; not meant to be run by hand.
enableBundleCompileCache();
const { runSupervisor } = await import("../daemon/supervisor.ts");
process.exitCode = await runSupervisor(process.env);
process.exit();
