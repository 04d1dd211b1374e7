import { effectiveEnv } from "../config/envFile.ts";
import type { DataPaths } from "../config/paths.ts";
import { checkConfigFiles, checkSettings } from "./checkConfig.ts";
import { checkDataDir } from "./checkDataDir.ts";
import { checkEmbeddedModel, checkEmbeddedRuntime } from "./checkEmbedded.ts";
import { checkPort } from "./checkPort.ts";
import { checkProviders } from "./checkProviders.ts";
import { checkDefaultRoute } from "./checkRouter.ts";
import { checkCommandSandbox } from "./checkSandbox.ts";
import { checkStore } from "./checkStore.ts";
import { checkFileModes, checkVaultKey } from "./checkVault.ts";
import type { CheckContext, CheckResult, DaemonSelf } from "./types.ts";

export interface RunOptions {
  projectRoot?: string;
  /** Set by the running daemon so the port check recognises it. */
  self?: DaemonSelf;
}

/**
 * Every health check, in the order a person would fix things: the data directory, the config files, the
 * default route, the model servers the routes name, secrets, the port, the database, the embedded model.
 * Read-only: nothing on disk changes.
 */
export async function runChecks(
  paths: DataPaths,
  env: NodeJS.ProcessEnv = process.env,
  options: RunOptions = {},
): Promise<CheckResult[]> {
  const ctx: CheckContext = { paths, env: effectiveEnv(paths, env), ...options };
  const results: CheckResult[] = [];
  const dataDir = checkDataDir(ctx);
  results.push(dataDir);
  // The slow checks run while the others do: the model servers' probes (network, bounded by PROBE_TIMEOUT_MS)
  // and the llama.cpp load in a child process. Their results still come in the order above.
  const providers = dataDir.status !== "fail" ? checkProviders(ctx) : Promise.resolve([]);
  const runtime = checkEmbeddedRuntime();
  providers.catch(() => {}); // awaited below; not an unhandled rejection meanwhile
  // Below an unusable data directory every file check would only repeat the same problem.
  if (dataDir.status !== "fail") {
    results.push(...checkConfigFiles(ctx));
    const route = checkDefaultRoute(ctx);
    if (route) results.push(route);
  }
  const providersAt = results.length;
  results.push(checkSettings(ctx));
  if (dataDir.status !== "fail") results.push(checkVaultKey(ctx), checkFileModes(ctx), checkStore(ctx));
  const sandbox = checkCommandSandbox(ctx);
  if (sandbox) results.push(sandbox);
  const port = await checkPort(ctx);
  if (port) results.push(port);
  results.push(await runtime, checkEmbeddedModel(ctx));
  results.splice(providersAt, 0, ...(await providers));
  return results;
}

export function worstStatus(results: CheckResult[]): "ok" | "warn" | "fail" {
  if (results.some((r) => r.status === "fail")) return "fail";
  return results.some((r) => r.status === "warn") ? "warn" : "ok";
}
