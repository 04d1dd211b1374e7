import { z } from "zod";
import { memoryOverviewSchema, memorySettingsSchema, rememberResultSchema } from "../../memory/memoryService.ts";
import { searchHitSchema } from "../../memory/search.ts";
import { MAX_MEMORY_CHARS, MAX_SUBJECT_CHARS, MEMORY_KINDS, memoryRecordSchema } from "../../memory/store.ts";
import type { Services } from "../../runtime/services.ts";
import { pageSchema } from "../pagination.ts";
import { defineRoute, type RouteSpec } from "../route.ts";

// The second brain (docs/memory.md): learning on/off, overview, clear; and, for the UIs' Memory
// views and scripts, search, store and delete one item. Thin over memory/ (the same service as the tools).

const settingsBody = z.strictObject({ learning_enabled: z.boolean() });
const searchQuery = z.strictObject({
  q: z.string().trim().min(1).max(1000),
  limit: z.coerce.number().int().min(1).max(100).default(10),
  kind: z.enum(MEMORY_KINDS).optional(),
});
const itemBody = z.strictObject({
  content: z.string().trim().min(3).max(MAX_MEMORY_CHARS),
  kind: z.enum(MEMORY_KINDS).default("fact"),
  subject: z.string().trim().min(1).max(MAX_SUBJECT_CHARS).optional(),
});
const idParams = z.strictObject({ id: z.string().min(1).max(100) });

export function memoryRoutes(services: Services): RouteSpec[] {
  const { memory } = services;
  return [
    defineRoute({
      method: "GET",
      url: "/api/memory/second-brain/settings",
      operationId: "getMemorySettings",
      response: memorySettingsSchema,
      summary: "Whether learning is on, graph expansion, and which embedder (or text search alone) is in use",
      tag: "memory",
      handler: () => memory.settings(),
    }),
    defineRoute({
      method: "POST",
      url: "/api/memory/second-brain/settings",
      operationId: "setMemorySettings",
      response: memorySettingsSchema,
      summary: "Enables or pauses learning ({learning_enabled}); paused, nothing new is extracted",
      tag: "memory",
      body: settingsBody,
      handler: ({ body }) => memory.setLearning(body.learning_enabled),
    }),
    defineRoute({
      method: "GET",
      url: "/api/memory/second-brain/overview",
      operationId: "getMemoryOverview",
      response: memoryOverviewSchema,
      summary: "Counts by kind, recent items, size, vectors and the last time something was learned",
      tag: "memory",
      query: z.strictObject({ recent: z.coerce.number().int().min(0).max(100).default(10) }),
      handler: ({ query }) => memory.overview(query.recent),
    }),
    defineRoute({
      method: "POST",
      url: "/api/memory/second-brain/clear",
      operationId: "clearMemory",
      response: z.object({ removed: z.number() }),
      summary: "Deletes every memory (conversations already read are not learned again)",
      tag: "memory",
      handler: () => memory.clear(),
    }),
    defineRoute({
      method: "GET",
      url: "/api/memory/second-brain/search",
      operationId: "searchMemory",
      response: pageSchema(searchHitSchema),
      summary: "Hybrid search (text, vectors, recency, links) over the memories, best first",
      tag: "memory",
      query: searchQuery,
      handler: async ({ query }) => ({
        items: await memory.search(query.q, { limit: query.limit, ...(query.kind ? { kinds: [query.kind] } : {}) }),
        next_cursor: null,
      }),
    }),
    defineRoute({
      method: "POST",
      url: "/api/memory/second-brain/items",
      operationId: "createMemory",
      response: rememberResultSchema,
      responses: { 201: rememberResultSchema },
      summary: "Stores one memory (deduplicated like learned ones)",
      tag: "memory",
      body: itemBody,
      handler: ({ body }, _request, reply) => {
        const stored = memory.remember({ content: body.content, kind: body.kind, subject: body.subject ?? null });
        reply.code(stored.action === "created" ? 201 : 200);
        return stored;
      },
    }),
    defineRoute({
      method: "DELETE",
      url: "/api/memory/second-brain/items/:id",
      operationId: "deleteMemory",
      response: z.object({ removed: memoryRecordSchema }),
      errors: ["not_found"],
      summary: "Forgets one memory",
      tag: "memory",
      params: idParams,
      handler: ({ params }) => ({ removed: memory.forget(params.id) }),
    }),
  ];
}
