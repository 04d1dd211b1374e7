import { classifyMessage } from "../llm/classify.ts";
import { estimateTokens } from "../llm/prices.ts";
import type { LlmRouter } from "../llm/router.ts";
import type { LanguageModelV4Prompt, LlmEvent, TokenUsage } from "../llm/types.ts";
import type { Logger } from "../log/logger.ts";
import { AppError } from "../util/errors.ts";
import type { SessionStore } from "./sessions.ts";
import type { SlashResult } from "./slashCommands.ts";

// A plain chat turn: slash commands are answered without the model; anything else is classified into a task
// type (unless the caller chose one), sent to the router with the session's recent history, and stored. The
// agent (tools, tasks, steering) builds on this.

export interface ChatRequest {
  message: string;
  sessionId?: string;
  taskType?: string;
  signal?: AbortSignal;
}

export type ChatEvent =
  | { type: "start"; session_id: string; task_type: string; classified: boolean }
  | LlmEvent
  | { type: "command"; session_id: string; reply: string };

export interface ChatReply {
  session_id: string;
  task_type: string;
  reply: string;
  provider: string;
  model: string;
  usage: TokenUsage;
  cost_usd: number;
}

export interface ChatDeps {
  router: LlmRouter;
  sessions: SessionStore;
  /** Answers a line starting with "/" (SPEC.md slash commands). */
  runCommand: (line: string, sessionId: string) => Promise<SlashResult>;
  env: NodeJS.ProcessEnv;
  logger?: Logger;
}

export const MAX_MESSAGE_CHARS = 100_000;

export const SYSTEM_PROMPT =
  "You are Assistant, a private personal assistant running on the user's own machine. Answer clearly and " +
  "concisely, in the language the user writes in. Say so when you do not know something.";

export class ChatService {
  private readonly deps: ChatDeps;
  private readonly busy = new Set<string>();
  private readonly maxContextTokens: number;

  constructor(deps: ChatDeps) {
    this.deps = deps;
    const raw = deps.env.ASSISTANT_MAX_CONTEXT_TOKENS?.trim();
    this.maxContextTokens = raw && /^\d+$/.test(raw) && Number(raw) > 0 ? Number(raw) : 8192;
  }

  async *reply(request: ChatRequest): AsyncGenerator<ChatEvent> {
    const message = request.message.trim();
    if (!message) throw new AppError("invalid_request", "message is empty", { field: "message" });
    if (message.length > MAX_MESSAGE_CHARS) {
      throw new AppError("payload_too_large", `message is longer than ${MAX_MESSAGE_CHARS} characters`, {
        field: "message",
      });
    }
    const { sessions } = this.deps;
    const session = request.sessionId ? sessions.get(request.sessionId) : sessions.create();
    if (message.startsWith("/")) {
      const result = await this.deps.runCommand(message, session.id);
      yield { type: "command", session_id: result.sessionId ?? session.id, reply: result.reply };
      return;
    }
    if (this.busy.has(session.id)) {
      throw new AppError("conflict", `session ${session.id} is already answering a message; wait for it to finish`, {
        session_id: session.id,
      });
    }
    this.busy.add(session.id);
    try {
      const classified = !request.taskType;
      const taskType = request.taskType ?? classifyMessage(message).category;
      yield { type: "start", session_id: session.id, task_type: taskType, classified };
      // A session created for this message has no history to read.
      const history = request.sessionId ? sessions.recent(session.id, this.maxContextTokens, estimateTokens) : [];
      const prompt: LanguageModelV4Prompt = [
        { role: "system", content: SYSTEM_PROMPT },
        ...history.flatMap((m): LanguageModelV4Prompt => {
          if (m.role === "user") return [{ role: "user", content: [{ type: "text", text: m.content }] }];
          if (m.role === "assistant") return [{ role: "assistant", content: [{ type: "text", text: m.content }] }];
          return [];
        }),
        { role: "user", content: [{ type: "text", text: message }] },
      ];
      sessions.append(session.id, { role: "user", content: message, task_type: taskType });
      let text = "";
      for await (const event of this.deps.router.stream({
        taskType,
        prompt,
        sessionId: session.id,
        ...(request.signal ? { signal: request.signal } : {}),
      })) {
        if (event.type === "text") text += event.delta;
        else if (event.type === "reset") text = "";
        else if (event.type === "finish") {
          sessions.append(session.id, {
            role: "assistant",
            content: text,
            task_type: taskType,
            provider: event.provider,
            model: event.model,
          });
          if (this.deps.env.ASSISTANT_LOG_LLM_RESPONSE === "1") {
            this.deps.logger?.info("llm response", { provider: event.provider, model: event.model, text });
          }
        }
        yield event;
      }
    } finally {
      this.busy.delete(session.id);
    }
  }

  /** The whole reply at once (`POST /api/message` with `wait: true`, one-shot `assistant chat "..."`). */
  async replyOnce(request: ChatRequest): Promise<ChatReply> {
    let sessionId = request.sessionId ?? "";
    let taskType = request.taskType ?? "";
    let text = "";
    for await (const event of this.reply(request)) {
      if (event.type === "start") {
        sessionId = event.session_id;
        taskType = event.task_type;
      } else if (event.type === "command") {
        return {
          session_id: event.session_id,
          task_type: "command",
          reply: event.reply,
          provider: "assistant_core",
          model: "core",
          usage: { input: 0, output: 0 },
          cost_usd: 0,
        };
      } else if (event.type === "text") text += event.delta;
      else if (event.type === "reset") text = "";
      else if (event.type === "finish") {
        return {
          session_id: sessionId,
          task_type: taskType,
          reply: text,
          provider: event.provider,
          model: event.model,
          usage: event.usage,
          cost_usd: event.costUsd,
        };
      }
    }
    throw new AppError("internal", "the reply ended without a finish");
  }
}
