import { z } from "zod";
import { taskReportSchema } from "../../agent/reports.ts";
import { messageRecordSchema, sessionRecordSchema } from "../../agent/sessions.ts";
import { MAX_MESSAGE_CHARS, taskQueueSchema } from "../../agent/taskService.ts";
import { TASK_STATUSES, taskRecordSchema, taskStartedSchema } from "../../agent/tasks.ts";
import { taskTypeField } from "../../llm/taskTypes.ts";
import type { Services } from "../../runtime/services.ts";
import { namedStoredEventSchema } from "../eventSchemas.ts";
import { pageQuerySchema, pageSchema } from "../pagination.ts";
import { defineRoute, type RouteSpec } from "../route.ts";
import { TASK_ERRORS } from "../taskStream.ts";

// Tasks (docs/agent.md#tasks): create, list, inspect, watch through structured
// events, cancel, read the operator report, and see or flush the steering / follow-up queue.

const idParams = z.strictObject({ id: z.string().min(1).max(128) });
const createBody = z.strictObject({
  message: z.string().min(1).max(MAX_MESSAGE_CHARS),
  task_type: taskTypeField.optional(),
  session_id: z.string().min(1).max(128).optional(),
  wait: z.boolean().optional(),
});
const eventsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(200),
  after: z.coerce.number().int().min(0).optional(),
});

export function taskRoutes(services: Services): RouteSpec[] {
  const { agent, events } = services;
  return [
    defineRoute({
      method: "POST",
      url: "/api/tasks",
      operationId: "createTask",
      summary: "Creates a task from a message: 202 {task_id, session_id}, or with wait: true the finished task",
      tag: "tasks",
      body: createBody,
      response: taskRecordSchema,
      responses: { 202: taskStartedSchema },
      errors: TASK_ERRORS,
      handler: async ({ body }, _request, reply) => {
        const task = agent.submit({
          message: body.message,
          origin: "api",
          ...(body.task_type ? { taskType: body.task_type } : {}),
          ...(body.session_id ? { sessionId: body.session_id } : {}),
        });
        if (body.wait) {
          const aborted = new AbortController();
          reply.raw.on("close", () => aborted.abort(new Error("client disconnected")));
          return await agent.wait(task.id, aborted.signal);
        }
        reply.code(202);
        return { task_id: task.id, session_id: task.session_id };
      },
    }),
    defineRoute({
      method: "GET",
      url: "/api/tasks",
      operationId: "listTasks",
      summary: "Tasks, newest first; optional status and session filters",
      tag: "tasks",
      query: pageQuerySchema.extend({
        status: z.enum(TASK_STATUSES).optional(),
        session_id: z.string().min(1).max(128).optional(),
      }),
      response: pageSchema(taskRecordSchema),
      handler: ({ query }) =>
        agent.tasks.list({
          limit: query.limit,
          ...(query.cursor ? { cursor: query.cursor } : {}),
          ...(query.status ? { status: query.status } : {}),
          ...(query.session_id ? { sessionId: query.session_id } : {}),
        }),
    }),
    defineRoute({
      method: "GET",
      url: "/api/tasks/:id",
      operationId: "getTask",
      summary: "One task",
      tag: "tasks",
      params: idParams,
      response: taskRecordSchema,
      errors: ["not_found"],
      handler: ({ params }) => agent.tasks.get(params.id),
    }),
    defineRoute({
      method: "GET",
      url: "/api/tasks/:id/events",
      operationId: "listTaskEvents",
      summary: "The task's structured events, oldest first; `after` is the last event id seen",
      tag: "tasks",
      params: idParams,
      query: eventsQuery,
      response: z
        .object({ task_id: z.string(), status: z.enum(TASK_STATUSES), items: z.array(namedStoredEventSchema) })
        .meta({ id: "TaskEvents" }),
      errors: ["not_found"],
      handler: ({ params, query }) => {
        const task = agent.tasks.get(params.id);
        const items = events.list({
          taskId: task.id,
          limit: query.limit,
          ...(query.after !== undefined ? { afterSeq: query.after } : {}),
        });
        return { task_id: task.id, status: task.status, items };
      },
    }),
    defineRoute({
      method: "POST",
      url: "/api/tasks/:id/cancel",
      operationId: "cancelTask",
      summary: "Cancels a queued or running task (409 when it already ended)",
      tag: "tasks",
      params: idParams,
      response: taskRecordSchema,
      errors: ["not_found", "conflict"],
      handler: ({ params }) => {
        agent.cancel(params.id);
        return agent.tasks.get(params.id);
      },
    }),
    defineRoute({
      method: "GET",
      url: "/api/tasks/:id/report",
      operationId: "getTaskReport",
      summary: "The operator report: done, needs_review, failed, next_steps (409 while the task runs)",
      tag: "tasks",
      params: idParams,
      response: taskReportSchema,
      errors: ["not_found", "conflict"],
      handler: ({ params }) => agent.report(params.id),
    }),
    defineRoute({
      method: "GET",
      url: "/api/tasks/:id/queue",
      operationId: "getTaskQueue",
      summary: "Undelivered steering and follow-up messages of a task",
      tag: "tasks",
      params: idParams,
      response: taskQueueSchema,
      errors: ["not_found"],
      handler: ({ params }) => agent.queueOf(params.id),
    }),
    defineRoute({
      method: "DELETE",
      url: "/api/tasks/:id/queue",
      operationId: "clearTaskQueue",
      summary: "Flushes both queues of a task",
      tag: "tasks",
      params: idParams,
      response: z.object({ task_id: z.string(), cleared: z.number() }),
      errors: ["not_found"],
      handler: ({ params }) => agent.clearQueue(params.id),
    }),
    defineRoute({
      method: "GET",
      url: "/api/sessions",
      operationId: "listSessions",
      summary: "Chat sessions, most recently active first",
      tag: "chat",
      query: z.object({ limit: z.coerce.number().int().min(1).max(500).default(50) }),
      response: pageSchema(sessionRecordSchema),
      handler: ({ query }) => ({ items: services.sessions.list(query.limit), next_cursor: null }),
    }),
    defineRoute({
      method: "GET",
      url: "/api/sessions/:id/messages",
      operationId: "listSessionMessages",
      summary: "A session's messages, oldest first (the newest `limit`)",
      tag: "chat",
      params: idParams,
      query: z.object({ limit: z.coerce.number().int().min(1).max(1000).default(200) }),
      response: z
        .object({ session_id: z.string(), items: z.array(messageRecordSchema) })
        .meta({ id: "SessionMessages" }),
      errors: ["not_found"],
      handler: ({ params, query }) => {
        const session = services.sessions.get(params.id);
        return { session_id: session.id, items: services.sessions.after(session.id, 0, query.limit) };
      },
    }),
    defineRoute({
      method: "POST",
      url: "/api/sessions/:id/new",
      operationId: "startNewSession",
      summary: "Starts a new session (like /newsession): the short-term context of :id is left behind",
      tag: "chat",
      params: idParams,
      status: 201,
      response: z.object({ session_id: z.string(), previous_session_id: z.string() }),
      errors: ["not_found"],
      handler: ({ params }) => {
        services.sessions.get(params.id);
        const session = services.sessions.create();
        return { session_id: session.id, previous_session_id: params.id };
      },
    }),
  ];
}
