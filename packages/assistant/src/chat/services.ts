import { Conversation } from "../agent/conversation.ts";
import type { AgentServices } from "../agent/services.ts";
import { createAgentServices } from "../agent/services.ts";
import type { MessageRoute } from "../agent/taskService.ts";
import type { DaemonSelf } from "../doctor/types.ts";
import type { PluginRegistry } from "../plugins/registry.ts";
import type { MessageRouting } from "../plugins/routing.ts";
import type { Scheduler } from "../scheduler/scheduler.ts";
import type { SkillRegistry } from "../skills/registry.ts";
import type { Vault } from "../vault/vault.ts";
import { runSlashCommand, type SlashContext } from "./slashCommands.ts";

// The chat as the daemon wires it: the agent given what it needs from the other domains (the skills' index in its
// prompt, the routing rules of plugins and skills, memory), and the conversation every surface sends messages to,
// with the slash commands wired to all of them.

export interface ChatServices extends AgentServices {
  conversation: Conversation;
}

type AgentOptions = Parameters<typeof createAgentServices>[0];

export function createChatServices(
  options: Omit<AgentOptions, "llm" | "promptAddition" | "route"> & {
    llm: SlashContext["llm"];
    /** The environment /doctor checks. */
    env: NodeJS.ProcessEnv;
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
    /** For /schedule: the scheduler is built after the agent (its runs are tasks), so it is looked up on use. */
    scheduler: () => Scheduler;
  },
): ChatServices {
  const { paths, sessions, llm, skills } = options;
  const { agent } = createAgentServices({
    db: options.db,
    sessions,
    llm,
    tools: options.tools,
    events: options.events,
    paths,
    settings: options.settings,
    logger: options.logger,
    memory: options.memory,
    promptAddition: () => skills.index(),
    route: (message) => routeMessage(options.routing, skills, message),
  });
  const slash = (sessionId: string): SlashContext => ({
    llm,
    paths,
    sessions,
    sessionId,
    agent,
    status: options.status,
    env: options.env,
    vault: options.vault,
    skills,
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
  const { target, source } = match.rule;
  if (target.kind !== "skill")
    return { taskType: target.name, ...(source.kind === "plugin" ? { plugin: source.id } : {}) };
  const skill = skills.get(target.name);
  return skill ? { instructions: { source: `skill ${skill.name}`, text: skill.body } } : null;
}
