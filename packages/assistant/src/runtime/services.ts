import type { Conversation } from "../agent/conversation.ts";
import type { SessionStore } from "../agent/sessions.ts";
import type { TaskService } from "../agent/taskService.ts";
import type { LoginCodes } from "../auth/loginCodes.ts";
import type { WebSessions } from "../auth/webSessions.ts";
import type { DataPaths } from "../config/paths.ts";
import type { DaemonSettings } from "../config/settings.ts";
import type { EventLog } from "../events/eventLog.ts";
import type { LlmServices } from "../llm/services.ts";
import type { Logger } from "../log/logger.ts";
import type { MemoryService } from "../memory/memoryService.ts";
import type { MissionService } from "../mission/missionService.ts";
import type { MessageRouting } from "../plugins/routing.ts";
import type { PluginServices } from "../plugins/services.ts";
import type { Scheduler } from "../scheduler/scheduler.ts";
import type { SkillServices } from "../skills/services.ts";
import type { Db } from "../store/database.ts";
import type { ApprovalServices } from "../tools/approvals/services.ts";
import type { ToolServices } from "../tools/services.ts";
import type { Vault } from "../vault/vault.ts";

/** What the running daemon is made of. Built once at start (daemon/), handed to every route. */
export interface Services {
  version: string;
  startedAt: Date;
  paths: DataPaths;
  /** The environment after the env files were applied. */
  env: NodeJS.ProcessEnv;
  settings: DaemonSettings;
  logger: Logger;
  db: Db;
  events: EventLog;
  vault: Vault;
  token: string;
  loginCodes: LoginCodes;
  webSessions: WebSessions;
  llm: LlmServices;
  sessions: SessionStore;
  /** Tasks: the agent loop, steering and follow-up queues, reports. */
  agent: TaskService;
  /** Where every surface hands a user message (slash command, delivery to a running task, new task). */
  conversation: Conversation;
  /** Review queue, persistent permission decisions, approval mode. */
  approvals: ApprovalServices;
  /** The tool registry, the live tools policy and the runner every surface calls tools through. */
  tools: ToolServices;
  /** Installed skills (SKILL.md folders) and the installer. */
  skills: SkillServices;
  /** Installed WASM plugins and their reputation. */
  plugins: PluginServices;
  /** Routing rules of plugins and skills. */
  routing: MessageRouting;
  /** The second brain: memories, learning, search. */
  memory: MemoryService;
  /** Recurring schedules: each run is a task in the schedule's own session. */
  scheduler: Scheduler;
  /** The autonomous mission: heartbeat cycles from autonomous_mission.yaml, pause/resume, reports. */
  mission: MissionService;
  /** The port actually bound (differs from settings.port when that is 0). */
  port(): number;
}
