import type { SessionStore } from "../agent/sessions.ts";
import type { EventLog } from "../events/eventLog.ts";
import type { LlmServices } from "../llm/services.ts";
import type { Logger } from "../log/logger.ts";
import type { Db } from "../store/database.ts";
import type { ToolServices } from "../tools/services.ts";
import { MemoryService, type MemoryServiceDeps } from "./memoryService.ts";
import { memoryTools } from "./tools.ts";

export interface MemoryServices {
  memory: MemoryService;
}

/** The daemon's second brain: the service, and remember/recall/forget in the tool registry. */
export function createMemoryServices(options: {
  db: Db;
  llm: Pick<LlmServices, "router" | "embedded">;
  sessions: Pick<SessionStore, "after">;
  events: Pick<EventLog, "emit">;
  settings: MemoryServiceDeps["settings"];
  logger: Pick<Logger, "warn" | "info">;
  tools: Pick<ToolServices, "registry">;
}): MemoryServices {
  const memory = new MemoryService({
    db: options.db,
    router: options.llm.router,
    sessions: options.sessions,
    events: options.events,
    settings: options.settings,
    logger: options.logger,
    embeddedPresent: () => options.llm.embedded.state().file_present,
  });
  const tools = memoryTools(memory);
  options.tools.registry.addProvider(() => tools);
  return { memory };
}
