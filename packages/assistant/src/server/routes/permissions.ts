import { z } from "zod";
import type { Services } from "../../runtime/services.ts";
import { approveAlways } from "../../tools/approvals/always.ts";
import { decisionSchema, EFFECTS, MAX_SCOPE_CHARS } from "../../tools/approvals/decisions.ts";
import { APPROVAL_MODES } from "../../tools/approvals/mode.ts";
import { MAX_NOTE_CHARS, queueItemSchema } from "../../tools/approvals/queue.ts";
import { QUEUE_STATUSES } from "../../tools/approvals/queueStatus.ts";
import { pageQuerySchema, pageSchema } from "../pagination.ts";
import { defineRoute, type RouteSpec } from "../route.ts";

// Permissions (docs/http-api.md#permissions): the review queue of sensitive tool calls, the
// persistent allow/deny decisions, and the global approval mode.

const idParams = z.strictObject({ id: z.string().min(1).max(128) });

const noteBody = z.strictObject({ note: z.string().max(MAX_NOTE_CHARS).optional() }).optional();
const approveBody = z
  .strictObject({ note: z.string().max(MAX_NOTE_CHARS).optional(), always: z.boolean().optional() })
  .optional();
/** An approved item, with the allow decision `always` made (or found), else null. */
const approvedSchema = queueItemSchema
  .extend({ decision: decisionSchema.nullable() })
  .meta({ id: "ApprovedQueueItem" });
const modeSchema = z.object({ mode: z.enum(APPROVAL_MODES) }).meta({ id: "ApprovalMode" });

export function permissionRoutes(services: Services): RouteSpec[] {
  const { queue, decisions, mode } = services.approvals;
  const act = (action: "deny" | "expire", summary: string) =>
    defineRoute({
      method: "POST",
      url: `/api/permissions/queue/:id/${action}`,
      operationId: `${action}QueueItem`,
      summary,
      tag: "permissions",
      params: idParams,
      body: noteBody,
      response: queueItemSchema,
      errors: ["not_found", "conflict"],
      handler: ({ params, body }) => queue[action](params.id, body?.note),
    });
  return [
    defineRoute({
      method: "GET",
      url: "/api/permissions/queue",
      operationId: "listQueueItems",
      summary: "Review queue items, newest first; optional status filter",
      tag: "permissions",
      query: pageQuerySchema.extend({ status: z.enum(QUEUE_STATUSES).optional() }),
      response: pageSchema(queueItemSchema),
      handler: ({ query }) => queue.list(query),
    }),
    defineRoute({
      method: "GET",
      url: "/api/permissions/queue/:id",
      operationId: "getQueueItem",
      summary: "One review queue item",
      tag: "permissions",
      params: idParams,
      response: queueItemSchema,
      errors: ["not_found"],
      handler: ({ params }) => queue.get(params.id),
    }),
    defineRoute({
      method: "POST",
      url: "/api/permissions/queue/:id/approve",
      operationId: "approveQueueItem",
      summary:
        "Approves a pending item (optional note): the action may continue; with always, calls of the same tool on the same scope run without asking from now on (a persistent allow decision)",
      tag: "permissions",
      params: idParams,
      body: approveBody,
      response: approvedSchema,
      errors: ["not_found", "conflict"],
      handler: ({ params, body }) => {
        if (!body?.always) return { ...queue.approve(params.id, body?.note), decision: null };
        const { item, decision } = approveAlways({ queue, decisions }, params.id, body.note);
        return { ...item, decision };
      },
    }),
    act("deny", "Denies a pending item (optional note): the action is blocked with feedback"),
    act("expire", "Expires a pending item (optional note)"),
    defineRoute({
      method: "GET",
      url: "/api/permissions/decisions",
      operationId: "listDecisions",
      summary: "Persistent allow/deny decisions by tool and scope",
      tag: "permissions",
      query: pageQuerySchema,
      response: pageSchema(decisionSchema),
      handler: ({ query }) => decisions.list(query),
    }),
    defineRoute({
      method: "POST",
      url: "/api/permissions/decisions",
      operationId: "createDecision",
      summary: "Creates a persistent decision {tool, scope, effect}; scope is a command, path prefix, domain or *",
      tag: "permissions",
      status: 201,
      body: z.strictObject({
        tool: z.string().regex(/^([a-z0-9_]{1,64}|\*)$/, "a tool name (1 to 64 of a-z, 0-9, _) or *"),
        scope: z
          .string()
          .min(1)
          .max(MAX_SCOPE_CHARS)
          .refine((s) => !s.includes("\0"), "must not contain a NUL character"),
        effect: z.enum(EFFECTS),
      }),
      response: decisionSchema,
      errors: ["conflict"],
      handler: ({ body }) => decisions.create(body),
    }),
    defineRoute({
      method: "DELETE",
      url: "/api/permissions/decisions/:id",
      operationId: "deleteDecision",
      summary: "Deletes a persistent decision",
      tag: "permissions",
      params: idParams,
      response: z.object({ id: z.string(), deleted: z.literal(true) }),
      errors: ["not_found"],
      handler: ({ params }) => ({ id: decisions.delete(params.id).id, deleted: true as const }),
    }),
    defineRoute({
      method: "GET",
      url: "/api/permissions/mode",
      operationId: "getApprovalMode",
      summary: "Global approval mode: ask_me or allow_all",
      tag: "permissions",
      response: modeSchema,
      handler: () => ({ mode: mode.get() }),
    }),
    defineRoute({
      method: "POST",
      url: "/api/permissions/mode",
      operationId: "setApprovalMode",
      summary: "Sets the global approval mode {mode: ask_me | allow_all}",
      tag: "permissions",
      body: z.strictObject({ mode: z.enum(APPROVAL_MODES) }),
      response: modeSchema,
      handler: ({ body }) => ({ mode: mode.set(body.mode) }),
    }),
  ];
}
