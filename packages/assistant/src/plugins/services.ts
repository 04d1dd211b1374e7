import type { DataPaths } from "../config/paths.ts";
import type { DaemonSettings } from "../config/settings.ts";
import type { EventLog } from "../events/eventLog.ts";
import type { Logger } from "../log/logger.ts";
import type { Db } from "../store/database.ts";
import type { ToolRegistry } from "../tools/registry.ts";
import { PluginRegistry } from "./registry.ts";
import { ReputationStore } from "./reputation.ts";

// The daemon's plugins as it builds them at start: reputation in assistant.db, the registry scanned now, and
// plugin tools offered through the tool registry.

export interface PluginServices {
  registry: PluginRegistry;
  reputation: ReputationStore;
}

export function createPluginServices(options: {
  db: Db;
  paths: DataPaths;
  settings: Pick<DaemonSettings, "pluginTimeoutMs" | "pluginMaxMemoryMb" | "pluginFuel" | "pluginReputationThreshold">;
  events: Pick<EventLog, "emit">;
  logger: Pick<Logger, "warn" | "info">;
  tools: ToolRegistry;
  secret: (key: string) => string | null;
}): PluginServices {
  const reputation = new ReputationStore(options.db, options.events, options.settings.pluginReputationThreshold);
  const registry = new PluginRegistry({
    dir: options.paths.pluginsDir,
    settings: options.settings,
    reputation,
    events: options.events,
    logger: options.logger,
    secret: options.secret,
  });
  options.tools.addProvider(() => registry.tools());
  return { registry, reputation };
}
