import { z } from "zod";
import type { Services } from "../../runtime/services.ts";
import { scheduleInputSchema } from "../../scheduler/input.ts";
import { scheduleRecordSchema } from "../../scheduler/store.ts";
import { pageQuerySchema, pageSchema } from "../pagination.ts";
import { defineRoute, type RouteSpec } from "../route.ts";

// Schedules (docs/scheduler.md): list, inspect, create, delete, pause and resume. Thin over
// scheduler/ (the same service as /schedule and `assistant schedule`).

const idParams = z.strictObject({ id: z.string().min(1).max(128) });

export function scheduleRoutes(services: Services): RouteSpec[] {
  const { scheduler } = services;
  return [
    defineRoute({
      method: "GET",
      url: "/api/schedules",
      operationId: "listSchedules",
      summary: "Schedules, newest first",
      tag: "schedules",
      query: pageQuerySchema,
      response: pageSchema(scheduleRecordSchema),
      handler: ({ query }) => scheduler.list(query),
    }),
    defineRoute({
      method: "GET",
      url: "/api/schedules/:id",
      operationId: "getSchedule",
      summary: "One schedule",
      tag: "schedules",
      params: idParams,
      response: scheduleRecordSchema,
      errors: ["not_found"],
      handler: ({ params }) => scheduler.get(params.id),
    }),
    defineRoute({
      method: "POST",
      url: "/api/schedules",
      operationId: "createSchedule",
      summary:
        "Creates a schedule: its description is sent as a task every interval_secs or on a cron expression, in its own session",
      tag: "schedules",
      body: scheduleInputSchema(scheduler.minIntervalSecs),
      status: 201,
      response: scheduleRecordSchema,
      handler: ({ body }) => scheduler.create(body),
    }),
    defineRoute({
      method: "DELETE",
      url: "/api/schedules/:id",
      operationId: "deleteSchedule",
      response: z.object({ removed: z.string() }),
      errors: ["not_found"],
      summary: "Deletes a schedule; a run in flight finishes",
      tag: "schedules",
      params: idParams,
      handler: ({ params }) => ({ removed: scheduler.delete(params.id).id }),
    }),
    defineRoute({
      method: "POST",
      url: "/api/schedules/:id/pause",
      operationId: "pauseSchedule",
      response: scheduleRecordSchema,
      errors: ["not_found", "conflict"],
      summary: "Pauses a schedule (409 when paused); a run in flight finishes",
      tag: "schedules",
      params: idParams,
      handler: ({ params }) => scheduler.pause(params.id),
    }),
    defineRoute({
      method: "POST",
      url: "/api/schedules/:id/resume",
      operationId: "resumeSchedule",
      response: scheduleRecordSchema,
      errors: ["not_found", "conflict"],
      summary: "Resumes a paused schedule (409 when active); the next run is one window from now",
      tag: "schedules",
      params: idParams,
      handler: ({ params }) => scheduler.resume(params.id),
    }),
  ];
}
