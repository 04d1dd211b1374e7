import type { Message, TaskStreamMessage } from "@assistant/client";

// A chat as the page shows it: the person's lines and the answers, each answer with the tool calls, approvals and
// steering of its task. `applyFrame` folds one event of `POST /api/message {stream: true}` into the answer.

export interface ToolCall {
  id: string;
  name: string;
  arguments: unknown;
  status?: "ok" | "denied" | "error" | "invalid_arguments";
  output?: string;
}

export interface Turn {
  id: string;
  role: "user" | "assistant";
  text: string;
  /** How a line typed while a task ran was delivered. */
  delivery?: "steering" | "follow_up";
  failed?: boolean;
  taskId?: string;
  tools: ToolCall[];
  /** Queue items of this answer's task that asked for a decision, with the decision once taken. */
  approvals: Array<{ id: string; status?: string }>;
  /** Steering messages the model was given during this answer. */
  steered: Array<{ id: string; text: string }>;
  done?: boolean;
}

export function userTurn(id: string, text: string, delivery?: Turn["delivery"]): Turn {
  return { id, role: "user", text, tools: [], approvals: [], steered: [], ...(delivery ? { delivery } : {}) };
}

export function answerTurn(id: string): Turn {
  return { id, role: "assistant", text: "", tools: [], approvals: [], steered: [] };
}

/** A session's stored messages as turns (tool and system messages are the model's context, not the chat). */
export function turnsOfMessages(messages: Message[]): Turn[] {
  return messages
    .filter((m) => m.role === "user" || m.role === "assistant")
    .map((m) => ({ ...answerTurn(m.id), role: m.role as Turn["role"], text: m.content, done: true }));
}

export function applyFrame(turn: Turn, frame: TaskStreamMessage): Turn {
  switch (frame.event) {
    case "start":
      return { ...turn, taskId: frame.data.task_id };
    case "token":
      return { ...turn, text: turn.text + frame.data.delta };
    case "reset":
      return { ...turn, text: "" };
    case "tool_call":
      return {
        ...turn,
        tools: [...turn.tools, { id: frame.data.id, name: frame.data.name, arguments: frame.data.arguments }],
      };
    case "tool_result":
      return {
        ...turn,
        tools: turn.tools.map((call) =>
          call.id === frame.data.id ? { ...call, status: frame.data.status, output: frame.data.output } : call,
        ),
      };
    case "approval_requested":
      return { ...turn, approvals: [...turn.approvals, { id: frame.data.queue_item_id }] };
    case "approval_resolved":
      return {
        ...turn,
        approvals: turn.approvals.map((a) =>
          a.id === frame.data.queue_item_id ? { ...a, status: frame.data.status } : a,
        ),
      };
    case "steering_applied":
      return { ...turn, steered: [...turn.steered, { id: frame.data.id, text: frame.data.text }] };
    case "done":
      return { ...turn, text: frame.data.reply, done: true };
    case "error":
      return { ...turn, text: frame.data.error.message, failed: true, done: true };
    default:
      return turn;
  }
}
