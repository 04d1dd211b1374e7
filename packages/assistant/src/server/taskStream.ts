import type { FastifyReply } from "fastify";
import { z } from "zod";
import { agentEventSchema } from "../agent/loop.ts";
import { type LiveEvent, liveStateSchema, type TaskService } from "../agent/taskService.ts";
import { TASK_STATUSES, type TaskRecord } from "../agent/tasks.ts";
import { AppError, type ErrorCode, isAppError } from "../util/errors.ts";
import { errorBody, errorBodySchema } from "./errors.ts";
import { openStreams } from "./sse.ts";

// A task's live progress as server-sent events (POST /api/message with stream: true): `start`, `route`, `fallback`,
// `token`, `reset`, `tool_call`, `tool_result`, `approval_requested`, `approval_resolved`, `steering_applied`, `state`,
// then `done` {task_id, session_id, status, reply} or `error`. Closing the connection cancels the task: the
// person watching stopped it. Token deltas are written at most every TOKEN_FLUSH_MS: the first at once, the ones
// that follow it within that time together in one frame. A fast local model makes a token every half millisecond,
// and one socket write per token cost more than the model did (docs/http-api.md).

/** Longest a token delta waits for others to share its frame; below what a person can see. */
export const TOKEN_FLUSH_MS = 8;

/** What a route that waits for a task can answer: the error the task failed with. */
export const TASK_ERRORS: ErrorCode[] = [
  "not_found",
  "conflict",
  "budget_exceeded",
  "provider_error",
  "provider_unavailable",
  "provider_timeout",
  "config_invalid",
  "vault_locked",
];

export const taskReplySchema = z
  .object({
    task_id: z.string(),
    session_id: z.string(),
    status: z.enum(TASK_STATUSES),
    reason: z.string().nullable(),
    task_type: z.string().nullable(),
    reply: z.string(),
    provider: z.string().nullable(),
    model: z.string().nullable(),
    usage: z.object({ input: z.number(), output: z.number() }),
    cost_usd: z.number(),
  })
  .meta({ id: "TaskReply" });

/** A slash command's answer: no task ran. */
export const commandReplySchema = z
  .object({ task_id: z.null(), session_id: z.string(), reply: z.string(), command: z.literal(true) })
  .meta({ id: "CommandReply" });

const message = <E extends string, D extends z.ZodType>(event: E, data: D) =>
  z.object({ event: z.literal(event), data });
/** The agent's live events as sent: `type` becomes the SSE event name (`turn` is stored, not streamed). */
const agentMessages = agentEventSchema.options
  .filter((option) => option.shape.type.value !== "turn")
  .map((option) => {
    const { type, ...data } = option.shape;
    return message(type.value, z.object(data));
  });

/** One server-sent message of a task stream (`event: <name>`, `data: <JSON>`), ending with `done` or `error`. */
export const taskStreamMessageSchema = z
  .union([
    message(
      "start",
      z.object({
        task_id: z.string(),
        session_id: z.string(),
        task_type: z.string().nullable(),
        classified: z.boolean(),
      }),
    ),
    ...agentMessages,
    message("state", liveStateSchema.omit({ type: true })),
    message("done", z.union([taskReplySchema, commandReplySchema.omit({ task_id: true })])),
    message("error", errorBodySchema),
  ])
  .meta({
    id: "TaskStreamMessage",
    description:
      "One server-sent event of a task's progress: `event: <name>` and `data: <JSON>`; the stream ends after `done` (the finished task, or a slash command's reply) or `error`.",
  });

/** How a finished task answers a chat client (wait: true, the stream's `done`). */
export function taskReply(task: TaskRecord): z.infer<typeof taskReplySchema> {
  return {
    task_id: task.id,
    session_id: task.session_id,
    status: task.status,
    reason: task.reason,
    task_type: task.task_type,
    reply: task.reply ?? "",
    provider: task.provider,
    model: task.model,
    usage: { input: task.input_tokens, output: task.output_tokens },
    cost_usd: task.cost_usd,
  };
}

export function streamTask(
  agent: TaskService,
  task: TaskRecord,
  reply: FastifyReply,
  classified: boolean,
): Promise<void> {
  reply.hijack();
  const out = reply.raw;
  openStreams.add(reply);
  out.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache, no-transform",
    "x-accel-buffering": "no",
  });
  const send = (event: string, data: unknown) => {
    if (!out.writableEnded) out.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  send("start", { task_id: task.id, session_id: task.session_id, task_type: task.task_type, classified });
  let pending = "";
  let flushedAt = Number.NEGATIVE_INFINITY;
  let timer: NodeJS.Timeout | undefined;
  const flushTokens = () => {
    clearTimeout(timer);
    timer = undefined;
    if (!pending) return;
    send("token", { delta: pending });
    pending = "";
    flushedAt = performance.now();
  };
  const token = (delta: string) => {
    pending += delta;
    if (timer) return;
    const wait = flushedAt + TOKEN_FLUSH_MS - performance.now();
    if (wait <= 0) flushTokens();
    else timer = setTimeout(flushTokens, wait);
  };
  return new Promise<void>((resolve) => {
    let finished = false;
    const end = () => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      unsubscribe();
      openStreams.delete(reply);
      out.end();
      resolve();
    };
    const onEvent = (event: LiveEvent) => {
      switch (event.type) {
        case "token":
          token(event.delta);
          break;
        case "done":
          break;
        case "turn":
          flushTokens(); // the turn's text is complete: no need to wait for the timer
          break;
        default: {
          flushTokens(); // in order: the text so far, then what happened after it
          const { type, ...data } = event;
          send(type, data);
        }
      }
    };
    const unsubscribe = agent.subscribe(task.id, onEvent);
    out.on("close", () => {
      if (finished) return;
      try {
        agent.cancel(task.id, "the client disconnected");
      } catch {
        // already finished
      }
      end();
    });
    agent.wait(task.id).then(
      (done) => {
        flushTokens();
        send("done", taskReply(done));
        end();
      },
      (error: unknown) => {
        flushTokens();
        send("error", errorBody(isAppError(error) ? error : new AppError("internal", "the task failed")));
        end();
      },
    );
  });
}
