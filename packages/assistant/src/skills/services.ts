import type { DataPaths } from "../config/paths.ts";
import type { DaemonSettings } from "../config/settings.ts";
import type { EventLog } from "../events/eventLog.ts";
import type { Logger } from "../log/logger.ts";
import type { ReviewQueue } from "../tools/approvals/queue.ts";
import type { ToolServices } from "../tools/services.ts";
import { SkillRegistry } from "./registry.ts";
import { SkillService } from "./skillService.ts";
import { skillTools } from "./tools.ts";

// The daemon's skills as it builds them at start.
export interface SkillServices {
  registry: SkillRegistry;
  service: SkillService;
}

/** The daemon's skills: the registry scanned now, the installer, and use_skill/install_skill in the tool registry. */
export function createSkillServices(options: {
  paths: DataPaths;
  settings: Pick<DaemonSettings, "githubEnterpriseHosts">;
  tools: Pick<ToolServices, "registry" | "policy">;
  queue: ReviewQueue;
  events: Pick<EventLog, "emit">;
  logger: Pick<Logger, "info" | "warn">;
}): SkillServices {
  const registry = new SkillRegistry({ dir: options.paths.skillsDir, events: options.events, logger: options.logger });
  const service = new SkillService({ ...options, registry, policy: options.tools.policy });
  const tools = skillTools(registry, service);
  options.tools.registry.addProvider(() => tools);
  return { registry, service };
}
