import { z } from "zod";
import { MAX_MESSAGE_CHARS } from "../../agent/taskService.ts";
import { TASK_STATUSES } from "../../agent/tasks.ts";
import type { Services } from "../../runtime/services.ts";
import { pageQuerySchema } from "../pagination.ts";
import { defineRoute, type RouteSpec } from "../route.ts";

// Tasks (docs/agent.md#tasks): create, list, inspect, watch through structured
// events, cancel, read the operator report, and see or flush the steering / follow-up queue.

const idParams = z.strictObject({ id: z.string().min(1).max(128) });
const createBody = z.strictObject({
  message: z.string().min(1).max(MAX_MESSAGE_CHARS),
  task_type: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,64}$/, "expected a task type name such as code_generation")
    .optional(),
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
      summary: "Creates a task from a message: 202 {task_id, session_id}, or with wait: true the finished task",
      tag: "tasks",
      body: createBody,
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
      summary: "Tasks, newest first; optional status and session filters",
      tag: "tasks",
      query: pageQuerySchema.extend({
        status: z.enum(TASK_STATUSES).optional(),
        session_id: z.string().min(1).max(128).optional(),
      }),
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
      summary: "One task",
      tag: "tasks",
      params: idParams,
      handler: ({ params }) => agent.tasks.get(params.id),
    }),
    defineRoute({
      method: "GET",
      url: "/api/tasks/:id/events",
      summary: "The task's structured events, oldest first; `after` is the last event id seen",
      tag: "tasks",
      params: idParams,
      query: eventsQuery,
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
      summary: "Cancels a queued or running task (409 when it already ended)",
      tag: "tasks",
      params: idParams,
      handler: ({ params }) => {
        agent.cancel(params.id);
        return agent.tasks.get(params.id);
      },
    }),
    defineRoute({
      method: "GET",
      url: "/api/tasks/:id/report",
      summary: "The operator report: done, needs_review, failed, next_steps (409 while the task runs)",
      tag: "tasks",
      params: idParams,
      handler: ({ params }) => agent.report(params.id),
    }),
    defineRoute({
      method: "GET",
      url: "/api/tasks/:id/queue",
      summary: "Undelivered steering and follow-up messages of a task",
      tag: "tasks",
      params: idParams,
      handler: ({ params }) => agent.queueOf(params.id),
    }),
    defineRoute({
      method: "DELETE",
      url: "/api/tasks/:id/queue",
      summary: "Flushes both queues of a task",
      tag: "tasks",
      params: idParams,
      handler: ({ params }) => agent.clearQueue(params.id),
    }),
    defineRoute({
      method: "GET",
      url: "/api/sessions",
      summary: "Chat sessions, most recently active first",
      tag: "chat",
      query: z.object({ limit: z.coerce.number().int().min(1).max(500).default(50) }),
      handler: ({ query }) => ({ items: services.sessions.list(query.limit), next_cursor: null }),
    }),
    defineRoute({
      method: "GET",
      url: "/api/sessions/:id/messages",
      summary: "A session's messages, oldest first (the newest `limit`)",
      tag: "chat",
      params: idParams,
      query: z.object({ limit: z.coerce.number().int().min(1).max(1000).default(200) }),
      handler: ({ params, query }) => {
        const session = services.sessions.get(params.id);
        return { session_id: session.id, items: services.sessions.after(session.id, 0, query.limit) };
      },
    }),
    defineRoute({
      method: "POST",
      url: "/api/sessions/:id/new",
      summary: "Starts a new session (like /newsession): the short-term context of :id is left behind",
      tag: "chat",
      params: idParams,
      status: 201,
      handler: ({ params }) => {
        services.sessions.get(params.id);
        const session = services.sessions.create();
        return { session_id: session.id, previous_session_id: params.id };
      },
    }),
  ];
}
