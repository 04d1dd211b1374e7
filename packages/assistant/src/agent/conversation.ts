import { AppError } from "../util/errors.ts";
import type { SessionStore } from "./sessions.ts";
import type { TaskService } from "./taskService.ts";
import type { DeliveryMode, QueuedMessage, TaskOrigin, TaskRecord } from "./tasks.ts";

// What happens to a user message, for every surface (HTTP, OpenAI-compatible API, channels, UIs): a line starting
// with "/" is a slash command answered without the model; with a delivery mode it is queued on the session's
// running task (steering or follow-up); otherwise it becomes a task.

export interface IncomingMessage {
  message: string;
  sessionId?: string;
  /** Deliver to this task instead of the session's running one. */
  taskId?: string;
  taskType?: string;
  mode?: DeliveryMode;
  origin: TaskOrigin;
}

/** A command's reply, and the session the chat continues in when the command switched it (/newsession). */
export interface SlashResult {
  reply: string;
  sessionId?: string;
}

export type Handled =
  | { kind: "command"; session_id: string; reply: string }
  | { kind: "queued"; task_id: string; session_id: string; queued: QueuedMessage }
  | { kind: "task"; task: TaskRecord };

export class Conversation {
  readonly #agent: TaskService;
  readonly #sessions: SessionStore;
  readonly #command: (line: string, sessionId: string) => Promise<SlashResult>;

  constructor(deps: {
    agent: TaskService;
    sessions: SessionStore;
    runCommand: (line: string, sessionId: string) => Promise<SlashResult>;
  }) {
    this.#agent = deps.agent;
    this.#sessions = deps.sessions;
    this.#command = deps.runCommand;
  }

  async handle(input: IncomingMessage): Promise<Handled> {
    const text = input.message.trim();
    if (input.mode) return this.#deliver(input, input.mode);
    if (text.startsWith("/") && !input.taskType) {
      const session = input.sessionId ? this.#sessions.get(input.sessionId) : this.#sessions.create();
      const result = await this.#command(text, session.id);
      return { kind: "command", session_id: result.sessionId ?? session.id, reply: result.reply };
    }
    const task = this.#agent.submit({
      message: input.message,
      origin: input.origin,
      ...(input.sessionId ? { sessionId: input.sessionId } : {}),
      ...(input.taskType ? { taskType: input.taskType } : {}),
    });
    return { kind: "task", task };
  }

  #deliver(input: IncomingMessage, mode: DeliveryMode): Handled {
    let taskId = input.taskId;
    if (!taskId) {
      if (!input.sessionId) {
        throw new AppError(
          "invalid_request",
          "message_delivery_mode needs the session_id (or task_id) of a running task",
          {
            field: "session_id",
          },
        );
      }
      this.#sessions.get(input.sessionId);
      const active = this.#agent.activeTask(input.sessionId);
      if (!active) {
        throw new AppError(
          "conflict",
          `no task is running in session ${input.sessionId}; send the message without message_delivery_mode`,
          { session_id: input.sessionId },
        );
      }
      taskId = active.id;
    }
    const queued = this.#agent.deliver(taskId, mode, input.message);
    const task = this.#agent.tasks.get(taskId);
    return { kind: "queued", task_id: task.id, session_id: task.session_id, queued };
  }
}
