import { loadConfig } from "../config/configFiles.ts";
import type { DataPaths } from "../config/paths.ts";
import type { DaemonSettings } from "../config/settings.ts";
import type { DaemonSelf } from "../doctor/types.ts";
import type { EventLog } from "../events/eventLog.ts";
import type { LlmServices } from "../llm/services.ts";
import type { Logger } from "../log/logger.ts";
import type { PluginRegistry } from "../plugins/registry.ts";
import type { MessageRouting } from "../plugins/routing.ts";
import type { Scheduler } from "../scheduler/scheduler.ts";
import type { SkillRegistry } from "../skills/registry.ts";
import type { Db } from "../store/database.ts";
import type { ToolServices } from "../tools/services.ts";
import type { Vault } from "../vault/vault.ts";
import { Conversation } from "./conversation.ts";
import { createOrchestrator } from "./orchestrator.ts";
import { systemPrompt } from "./prompt.ts";
import type { SessionStore } from "./sessions.ts";
import { runSlashCommand, type SlashContext } from "./slashCommands.ts";
import { type MessageRoute, type TaskMemory, TaskService } from "./taskService.ts";
import { TaskStore } from "./tasks.ts";

// The agent as the daemon builds it: the task service over the router and tools, the conversation entry point
// every surface uses, and the slash commands wired to both. agent_profile.json is read once at start (edits
// apply after a restart).

export interface AgentServices {
  agent: TaskService;
  conversation: Conversation;
}

export function createAgentServices(options: {
  db: Db;
  sessions: SessionStore;
  llm: LlmServices;
  tools: ToolServices;
  events: EventLog;
  paths: DataPaths;
  /** The environment /doctor checks. */
  env: NodeJS.ProcessEnv;
  settings: DaemonSettings;
  logger: Logger;
  /** What /status says about the daemon. */
  status: () => string;
  /** For /vault list (names only). */
  vault: Pick<Vault, "list">;
  /** The daemon's pid and port, for /doctor's port check. */
  self?: () => DaemonSelf;
  /** Given only to a supervised daemon: /restart calls it. */
  restart?: () => void;
  /** Installed skills: their index joins the system prompt; /skills manages them. */
  skills: SkillRegistry;
  /** Installed plugins, for /plugins and /reload. */
  plugins: PluginRegistry;
  /** Routing rules of plugins and skills. */
  routing: MessageRouting;
  /** The second brain: memories in prompts, learning after replies, the flush before compaction. */
  memory: TaskMemory;
  /** For /schedule: the scheduler is built after the agent (its runs are tasks), so it is looked up on use. */
  scheduler: () => Scheduler;
}): AgentServices {
  const { paths, sessions, llm } = options;
  const profile = loadConfig("agent_profile", paths);
  const prompt = systemPrompt(profile);
  const agent = new TaskService({
    tasks: new TaskStore(options.db),
    sessions,
    router: llm.router,
    tools: options.tools,
    events: options.events,
    reportsDir: paths.reportsDir,
    settings: options.settings,
    logger: options.logger,
    systemPrompt: () => {
      const index = options.skills.index();
      return index ? `${prompt}\n${index}` : prompt;
    },
    agentName: profile.name,
    route: (message) => routeMessage(options.routing, options.skills, message),
    memory: options.memory,
  });
  agent.setOrchestrator(
    createOrchestrator({
      agent,
      router: llm.router,
      settings: options.settings,
      logger: options.logger,
      agentName: profile.name,
    }),
  );
  const slash = (sessionId: string): SlashContext => ({
    llm,
    paths,
    sessions,
    sessionId,
    agent,
    status: options.status,
    env: options.env,
    vault: options.vault,
    skills: options.skills,
    plugins: options.plugins,
    scheduler: options.scheduler,
    ...(options.self ? { self: options.self } : {}),
    ...(options.restart ? { restart: options.restart } : {}),
  });
  const conversation = new Conversation({
    agent,
    sessions,
    runCommand: (line, sessionId) => runSlashCommand(line, slash(sessionId)),
  });
  return { agent, conversation };
}

/** What a matching routing rule means for a message: a task type (an agent id is one too) or a skill to follow. */
function routeMessage(routing: MessageRouting, skills: SkillRegistry, message: string): MessageRoute | null {
  const match = routing.match(message);
  if (!match) return null;
  const { target } = match.rule;
  if (target.kind !== "skill") return { taskType: target.name };
  const skill = skills.get(target.name);
  return skill ? { instructions: { source: `skill ${skill.name}`, text: skill.body } } : null;
}
