import { z } from "zod";
import { MAX_MESSAGE_CHARS } from "../../agent/taskService.ts";
import { DELIVERY_MODES, taskStartedSchema } from "../../agent/tasks.ts";
import { taskTypeField } from "../../llm/taskTypes.ts";
import type { Services } from "../../runtime/services.ts";
import { AppError } from "../../util/errors.ts";
import { defineRoute, type RouteSpec } from "../route.ts";
import {
  commandReplySchema,
  streamTask,
  TASK_ERRORS,
  taskReply,
  taskReplySchema,
  taskStreamMessageSchema,
} from "../taskStream.ts";

// POST /api/message (docs/http-api.md#chat-and-tasks): a slash command is answered at once; with
// message_delivery_mode the message is queued on the session's running task (202); otherwise it starts a task:
// 202 {task_id, session_id}, or with `wait: true` 200 {task_id, session_id, reply}, or with `stream: true` the
// task's progress as server-sent events.

const messageBody = z.strictObject({
  message: z.string().min(1).max(MAX_MESSAGE_CHARS),
  session_id: z.string().min(1).max(128).optional(),
  task_id: z.string().min(1).max(128).optional(),
  task_type: taskTypeField.optional(),
  message_delivery_mode: z.enum(DELIVERY_MODES).optional(),
  wait: z.boolean().optional(),
  stream: z.boolean().optional(),
});

/** A message queued on the session's running task (message_delivery_mode). */
const messageQueuedSchema = taskStartedSchema
  .extend({ queued: z.object({ id: z.string(), mode: z.enum(DELIVERY_MODES) }) })
  .meta({ id: "MessageQueued" });

export function messageRoutes(services: Services): RouteSpec[] {
  const { agent, conversation } = services;
  return [
    defineRoute({
      method: "POST",
      url: "/api/message",
      operationId: "sendMessage",
      summary:
        "Sends a user message: starts a task (202), `wait: true` returns the reply, `stream: true` streams progress; with message_delivery_mode it steers or follows up the running task",
      tag: "chat",
      body: messageBody,
      response: z.union([taskReplySchema, commandReplySchema]),
      // The queued answer first: a union takes the first schema that parses, and it holds the started answer.
      responses: { 202: z.union([messageQueuedSchema, taskStartedSchema]) },
      events: taskStreamMessageSchema,
      errors: TASK_ERRORS,
      handler: async ({ body }, _request, reply) => {
        if (body.wait && body.stream)
          throw new AppError("invalid_request", "set wait or stream, not both", { field: "stream" });
        if (body.task_id && !body.message_delivery_mode) {
          throw new AppError("invalid_request", "task_id is only used with message_delivery_mode", {
            field: "task_id",
          });
        }
        const handled = await conversation.handle({
          message: body.message,
          origin: "chat",
          ...(body.session_id ? { sessionId: body.session_id } : {}),
          ...(body.task_id ? { taskId: body.task_id } : {}),
          ...(body.task_type ? { taskType: body.task_type } : {}),
          ...(body.message_delivery_mode ? { mode: body.message_delivery_mode } : {}),
        });
        if (handled.kind === "command") {
          if (body.stream) {
            reply.hijack();
            reply.raw.writeHead(200, {
              "content-type": "text/event-stream; charset=utf-8",
              "cache-control": "no-cache",
            });
            const data = { session_id: handled.session_id, reply: handled.reply, command: true };
            reply.raw.end(`event: done\ndata: ${JSON.stringify(data)}\n\n`);
            return;
          }
          return { task_id: null, session_id: handled.session_id, reply: handled.reply, command: true };
        }
        if (handled.kind === "queued") {
          reply.code(202);
          return {
            task_id: handled.task_id,
            session_id: handled.session_id,
            queued: { id: handled.queued.id, mode: handled.queued.mode },
          };
        }
        const task = handled.task;
        if (body.stream) return streamTask(agent, task, reply, !body.task_type);
        if (body.wait) {
          // A client that stops waiting does not stop the task; it can be watched on /api/tasks/:id.
          const aborted = new AbortController();
          reply.raw.on("close", () => aborted.abort(new Error("client disconnected")));
          const done = await agent.wait(task.id, aborted.signal);
          return taskReply(done);
        }
        reply.code(202);
        return { task_id: task.id, session_id: task.session_id };
      },
    }),
  ];
}
