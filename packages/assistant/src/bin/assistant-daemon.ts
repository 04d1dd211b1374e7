import { enableBundleCompileCache } from "./compileCache.ts";

enableBundleCompileCache();
const { runDaemonForeground } = await import("../daemon/foreground.ts");
process.exitCode = await runDaemonForeground(process.env);
// Lingering handles (keep-alive sockets) must not keep a stopped daemon alive.
process.exit();
