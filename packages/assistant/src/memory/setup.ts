import type { SessionStore } from "../agent/sessions.ts";
import type { EventLog } from "../events/eventLog.ts";
import type { LlmServices } from "../llm/service.ts";
import type { Logger } from "../log/logger.ts";
import type { Db } from "../store/database.ts";
import type { ToolServices } from "../tools/service.ts";
import { MemoryService, type MemoryServiceDeps } from "./service.ts";
import { memoryTools } from "./tools.ts";

/** The daemon's second brain: the service, and remember/recall/forget in the tool registry. */
export function createMemoryService(options: {
  db: Db;
  llm: Pick<LlmServices, "router" | "embedded">;
  sessions: Pick<SessionStore, "after">;
  events: Pick<EventLog, "emit">;
  settings: MemoryServiceDeps["settings"];
  logger: Pick<Logger, "warn" | "info">;
  tools: Pick<ToolServices, "registry">;
}): MemoryService {
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
  return memory;
}
