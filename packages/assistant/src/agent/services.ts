import type { DataPaths } from "../config/paths.ts";
import type { DaemonSettings } from "../config/settings.ts";
import type { EventLog } from "../events/eventLog.ts";
import type { LlmServices } from "../llm/services.ts";
import type { Logger } from "../log/logger.ts";
import type { Db } from "../store/database.ts";
import type { ToolServices } from "../tools/services.ts";
import { createOrchestrator } from "./orchestrator.ts";
import { AgentProfileFile } from "./profile.ts";
import { systemPrompt } from "./prompt.ts";
import type { SessionStore } from "./sessions.ts";
import { type MessageRoute, type TaskMemory, TaskService } from "./taskService.ts";
import { TaskStore } from "./tasks.ts";

// The agent itself: the task service over the router and tools, with the orchestrator. What it learns from other
// domains (skills in the prompt, routing rules, memory) comes in as functions, so agent/ depends on none of them;
// chat/services.ts provides them. agent_profile.json is read at start and again at the next task after it changed
// (profile.ts): a profile saved through the API or by hand applies without a restart.

export interface AgentServices {
  agent: TaskService;
}

export function createAgentServices(options: {
  db: Db;
  sessions: SessionStore;
  llm: Pick<LlmServices, "router">;
  tools: ToolServices;
  events: EventLog;
  paths: DataPaths;
  settings: DaemonSettings;
  logger: Logger;
  /** Appended to the system prompt of each task when present (the installed skills' index). */
  promptAddition: () => string | undefined;
  /** What a message is routed to before it becomes a task (the routing rules of plugins and skills). */
  route: (message: string) => MessageRoute | null;
  /** The second brain: memories in prompts, learning after replies, the flush before compaction. */
  memory: TaskMemory;
}): AgentServices {
  const { paths, llm } = options;
  const profile = new AgentProfileFile(paths);
  const agent = new TaskService({
    tasks: new TaskStore(options.db),
    sessions: options.sessions,
    router: llm.router,
    tools: options.tools,
    events: options.events,
    reportsDir: paths.reportsDir,
    settings: options.settings,
    logger: options.logger,
    systemPrompt: () => {
      const prompt = systemPrompt(profile.current());
      const addition = options.promptAddition();
      return addition ? `${prompt}\n${addition}` : prompt;
    },
    agentName: () => profile.current().name,
    route: options.route,
    memory: options.memory,
  });
  agent.setOrchestrator(
    createOrchestrator({
      agent,
      router: llm.router,
      settings: options.settings,
      logger: options.logger,
      agentName: () => profile.current().name,
    }),
  );
  return { agent };
}
