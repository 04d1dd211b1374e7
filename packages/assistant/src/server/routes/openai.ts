import { randomUUID } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import { ROUND_LIMIT_REASON } from "../../agent/reports.ts";
import type { SessionStore } from "../../agent/sessions.ts";
import { type LiveEvent, MAX_MESSAGE_CHARS, type TaskService } from "../../agent/taskService.ts";
import type { TaskRecord } from "../../agent/tasks.ts";
import { listRoutes } from "../../llm/routeEditor.ts";
import type { Services } from "../../runtime/services.ts";
import { AppError, isAppError } from "../../util/errors.ts";
import { errorBody, errorBodySchema } from "../errors.ts";
import { defineRoute, type RouteSpec } from "../route.ts";
import { openStreams } from "../sse.ts";
import { TASK_ERRORS } from "../taskStream.ts";

// The OpenAI-compatible API (docs/http-api.md#openai-compatible-api): any OpenAI client can talk to the
// assistant. `GET /v1/models` lists `assistant` (routed by classification) and `assistant/<task_type>` per route;
// `POST /v1/chat/completions` hands the last user message to the conversation (a slash command is answered at
// once, anything else becomes a task) with the request's earlier messages as the session history, and answers
// the finished task as a chat.completion or streams its tokens as chat.completion.chunk events. The assistant
// runs its own tools: a client never sees tool_calls. Errors keep the API's shape {error: {code, message}}.

const MODEL = "assistant";
const SESSION_HEADER = "x-assistant-session";
const TASK_HEADER = "x-assistant-task-id";
const KEEPALIVE_MS = 15_000;

const textPart = z.object({ type: z.literal("text"), text: z.string() });

const chatMessage = z.object({
  role: z.enum(["system", "developer", "user", "assistant", "tool"]),
  // null: an assistant message that only carried tool calls.
  content: z
    .union([z.string(), z.array(textPart).max(500)], {
      error:
        'content must be a string or an array of text parts [{"type":"text","text":"..."}] (images and other parts are not supported)',
    })
    .nullable()
    .optional(),
});

const chatBody = z
  .object({
    model: z.string().min(1).max(200),
    messages: z.array(chatMessage).min(1).max(500),
    stream: z.boolean().nullable().optional(),
    stream_options: z.object({ include_usage: z.boolean().optional() }).nullable().optional(),
    user: z.string().max(256).optional(),
  })
  .superRefine((body, ctx) => {
    const last = body.messages.at(-1);
    if (!last) return; // min(1) reports it
    if (last.role !== "user") {
      ctx.addIssue({
        code: "custom",
        path: ["messages", body.messages.length - 1, "role"],
        message: "the last message must be the user's",
      });
    } else if (!textOf(last.content).trim()) {
      ctx.addIssue({
        code: "custom",
        path: ["messages", body.messages.length - 1, "content"],
        message: "the last user message is empty",
      });
    }
    const total = body.messages.reduce((n, m) => n + textOf(m.content).length, 0);
    if (total > MAX_MESSAGE_CHARS) {
      ctx.addIssue({
        code: "custom",
        path: ["messages"],
        message: `the messages' content is longer than ${MAX_MESSAGE_CHARS} characters in total`,
      });
    }
  });

type ChatMessage = z.infer<typeof chatMessage>;

const modelSchema = z
  .object({
    id: z.string(),
    object: z.literal("model"),
    created: z.number(),
    owned_by: z.string(),
  })
  .meta({ id: "OpenAiModel" });

const usageSchema = z
  .object({ prompt_tokens: z.number(), completion_tokens: z.number(), total_tokens: z.number() })
  .meta({ id: "ChatCompletionUsage" });
type TaskUsage = z.infer<typeof usageSchema>;

const FINISH_REASONS = ["stop", "length"] as const;

const completionSchema = z
  .object({
    id: z.string(),
    object: z.literal("chat.completion"),
    created: z.number(),
    model: z.string(),
    choices: z.array(
      z.object({
        index: z.number(),
        message: z.object({ role: z.literal("assistant"), content: z.string() }),
        finish_reason: z.enum(FINISH_REASONS),
      }),
    ),
    usage: usageSchema,
  })
  .meta({ id: "ChatCompletion" });

const chunkSchema = z
  .object({
    id: z.string(),
    object: z.literal("chat.completion.chunk"),
    created: z.number(),
    model: z.string(),
    choices: z.array(
      z.object({
        index: z.number(),
        delta: z.object({ role: z.literal("assistant").optional(), content: z.string().optional() }),
        finish_reason: z.enum(FINISH_REASONS).nullable(),
      }),
    ),
    /** Only in the last chunk, with stream_options.include_usage (its choices are empty). */
    usage: usageSchema.optional(),
  })
  .meta({ id: "ChatCompletionChunk" });

/** One server-sent message of a streamed completion: `data: <chunk>`, an error, then `data: [DONE]`. */
const chunkMessageSchema = z
  .object({ data: z.union([chunkSchema, errorBodySchema, z.literal("[DONE]")]) })
  .meta({ id: "ChatCompletionStreamMessage" });

function textOf(content: ChatMessage["content"]): string {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  return content.map((part) => part.text).join("\n");
}

/** `assistant` plus `assistant/<task_type>` for every route of the router (image_generation is not a chat route). */
function modelIds(services: Services): string[] {
  const categories = listRoutes(services.llm.router.configuration)
    .map((route) => route.category)
    .filter((category) => category !== "image_generation");
  return [MODEL, ...categories.map((category) => `${MODEL}/${category}`)];
}

/** The task type a model id asks for (undefined: classify the message); 404 for an id /v1/models does not list. */
function taskTypeOf(services: Services, model: string): string | undefined {
  if (model === MODEL) return undefined;
  if (model.startsWith(`${MODEL}/`) && modelIds(services).includes(model)) return model.slice(MODEL.length + 1);
  throw new AppError(
    "not_found",
    `the model ${JSON.stringify(model.slice(0, 200))} does not exist: see GET /v1/models`,
    {
      field: "body.model",
    },
  );
}

/** The session to continue (X-Assistant-Session), or a fresh one holding the request's earlier messages. */
function sessionFor(sessions: SessionStore, request: FastifyRequest, earlier: ChatMessage[]): string | undefined {
  const raw = request.headers[SESSION_HEADER];
  const header = (Array.isArray(raw) ? raw[0] : raw)?.trim();
  if (header) {
    if (header.length > 128) {
      throw new AppError("invalid_request", "X-Assistant-Session is longer than 128 characters", {
        field: "headers.x-assistant-session",
      });
    }
    return sessions.get(header).id;
  }
  // System and tool messages are not history: the assistant has its own system prompt and runs its own tools.
  const history = earlier.filter((m) => (m.role === "user" || m.role === "assistant") && textOf(m.content).trim());
  if (history.length === 0) return undefined;
  const session = sessions.create();
  for (const m of history)
    sessions.append(session.id, { role: m.role as "user" | "assistant", content: textOf(m.content) });
  return session.id;
}

function unixNow(): number {
  return Math.floor(Date.now() / 1000);
}

function completion(
  id: string,
  model: string,
  content: string,
  finish: (typeof FINISH_REASONS)[number],
  usage: TaskUsage,
): z.infer<typeof completionSchema> {
  return {
    id,
    object: "chat.completion" as const,
    created: unixNow(),
    model,
    choices: [{ index: 0, message: { role: "assistant" as const, content }, finish_reason: finish }],
    usage,
  };
}

function usageOf(task: TaskRecord | null): TaskUsage {
  const input = task?.input_tokens ?? 0;
  const output = task?.output_tokens ?? 0;
  return { prompt_tokens: input, completion_tokens: output, total_tokens: input + output };
}

function finishReason(task: TaskRecord): "stop" | "length" {
  return task.reason === ROUND_LIMIT_REASON ? "length" : "stop";
}

/** A finished task that did not complete, as the error a client is shown. */
function endedError(task: TaskRecord): AppError {
  if (task.status === "cancelled") {
    return new AppError("conflict", `the task was cancelled: ${task.reason ?? "cancelled"}`, { task_id: task.id });
  }
  return new AppError("internal", "the task failed; see the daemon log", { task_id: task.id });
}

function cancelQuietly(agent: TaskService, taskId: string, reason: string): void {
  try {
    agent.cancel(taskId, reason);
  } catch {
    // already finished
  }
}

/** An OpenAI chunk stream on a hijacked reply: chunk(), error(), done(). */
function chunkStream(reply: FastifyReply, id: string, model: string, headers: Record<string, string>) {
  reply.hijack();
  const out = reply.raw;
  out.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache, no-transform",
    "x-accel-buffering": "no",
    "x-content-type-options": "nosniff",
    ...headers,
  });
  const created = unixNow();
  const write = (text: string) => {
    if (!out.writableEnded && !out.destroyed) out.write(text);
  };
  const data = (value: unknown) => write(`data: ${JSON.stringify(value)}\n\n`);
  return {
    out,
    write,
    chunk: (delta: z.infer<typeof chunkSchema>["choices"][number]["delta"], finish: string | null = null) =>
      data({
        id,
        object: "chat.completion.chunk",
        created,
        model,
        choices: [{ index: 0, delta, finish_reason: finish }],
      }),
    usage: (usage: TaskUsage) => data({ id, object: "chat.completion.chunk", created, model, choices: [], usage }),
    error: (error: AppError) => data(errorBody(error)),
    done: () => {
      write("data: [DONE]\n\n");
      out.end();
    },
  };
}

function streamCompletion(
  agent: TaskService,
  task: TaskRecord,
  reply: FastifyReply,
  model: string,
  includeUsage: boolean,
): Promise<void> {
  const stream = chunkStream(reply, `chatcmpl-${task.id}`, model, {
    [TASK_HEADER]: task.id,
    [SESSION_HEADER]: task.session_id,
  });
  openStreams.add(reply);
  stream.chunk({ role: "assistant" });
  return new Promise<void>((resolve) => {
    let finished = false;
    const keepalive = setInterval(() => stream.write(": keepalive\n\n"), KEEPALIVE_MS);
    const end = () => {
      if (finished) return;
      finished = true;
      clearInterval(keepalive);
      unsubscribe();
      openStreams.delete(reply);
      stream.done();
      resolve();
    };
    const onEvent = (event: LiveEvent) => {
      if (event.type === "token" && event.delta) stream.chunk({ content: event.delta });
      // Streamed text cannot be taken back: a provider fallback restarting the answer starts a new line.
      else if (event.type === "reset") stream.chunk({ content: "\n" });
    };
    const unsubscribe = agent.subscribe(task.id, onEvent);
    stream.out.on("close", () => {
      if (finished) return;
      cancelQuietly(agent, task.id, "the client disconnected");
      end();
    });
    agent.wait(task.id).then(
      (done) => {
        if (done.status === "completed") {
          stream.chunk({}, finishReason(done));
          if (includeUsage) stream.usage(usageOf(done));
        } else {
          stream.error(endedError(done));
        }
        end();
      },
      (error: unknown) => {
        stream.error(isAppError(error) ? error : new AppError("internal", "the task failed"));
        end();
      },
    );
  });
}

export function openaiRoutes(services: Services): RouteSpec[] {
  const { agent, conversation, sessions } = services;
  return [
    defineRoute({
      method: "GET",
      url: "/v1/models",
      operationId: "listOpenAiModels",
      summary: "OpenAI-compatible: the assistant (routed by classification) and assistant/<task_type> per route",
      tag: "openai",
      response: z.object({ object: z.literal("list"), data: z.array(modelSchema) }).meta({ id: "OpenAiModelList" }),
      handler: () => {
        const created = Math.floor(services.startedAt.getTime() / 1000);
        return {
          object: "list" as const,
          data: modelIds(services).map((id) => ({ id, object: "model" as const, created, owned_by: MODEL })),
        };
      },
    }),
    defineRoute({
      method: "POST",
      url: "/v1/chat/completions",
      operationId: "createChatCompletion",
      summary:
        "OpenAI-compatible chat: the last user message becomes a task, earlier messages its history; `stream: true` streams chat.completion.chunk events",
      tag: "openai",
      body: chatBody,
      response: completionSchema,
      events: chunkMessageSchema,
      errors: TASK_ERRORS,
      handler: async ({ body }, request, reply) => {
        const taskType = taskTypeOf(services, body.model);
        const sessionId = sessionFor(sessions, request, body.messages.slice(0, -1));
        const handled = await conversation.handle({
          message: textOf(body.messages.at(-1)!.content),
          origin: "openai",
          ...(sessionId ? { sessionId } : {}),
          ...(taskType ? { taskType } : {}),
        });
        if (handled.kind === "queued") throw new AppError("internal", "the message was queued unexpectedly");
        if (handled.kind === "command") {
          const id = `chatcmpl-${randomUUID()}`;
          if (body.stream) {
            const stream = chunkStream(reply, id, body.model, { [SESSION_HEADER]: handled.session_id });
            stream.chunk({ role: "assistant" });
            stream.chunk({ content: handled.reply });
            stream.chunk({}, "stop");
            if (body.stream_options?.include_usage) stream.usage(usageOf(null));
            stream.done();
            return;
          }
          reply.header(SESSION_HEADER, handled.session_id);
          return completion(id, body.model, handled.reply, "stop", usageOf(null));
        }
        const task = handled.task;
        if (body.stream) {
          return streamCompletion(agent, task, reply, body.model, body.stream_options?.include_usage === true);
        }
        reply.header(TASK_HEADER, task.id);
        reply.header(SESSION_HEADER, task.session_id);
        // No OpenAI client can collect the answer of a request it gave up on: the task is cancelled.
        const aborted = new AbortController();
        reply.raw.on("close", () => {
          if (reply.raw.writableFinished) return;
          aborted.abort(new AppError("conflict", "the client disconnected"));
          cancelQuietly(agent, task.id, "the client disconnected");
        });
        const done = await agent.wait(task.id, aborted.signal);
        if (done.status !== "completed") throw endedError(done);
        return completion(`chatcmpl-${done.id}`, body.model, done.reply ?? "", finishReason(done), usageOf(done));
      },
    }),
  ];
}
