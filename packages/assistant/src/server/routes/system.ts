import { z } from "zod";
import { configuredProviders } from "../../llm/models.ts";
import type { Services } from "../../runtime/services.ts";
import { buildOpenApi } from "../openapi.ts";
import { defineRoute, type RouteSpec } from "../route.ts";

const healthSchema = z.object({ status: z.literal("ok"), version: z.string() }).meta({ id: "Health" });

const statusSchema = z
  .object({
    status: z.literal("ok"),
    version: z.string(),
    pid: z.number(),
    uptime_secs: z.number(),
    started_at: z.string(),
    data_dir: z.string(),
    listen: z.object({ bind: z.string(), port: z.number() }),
    node: z.string(),
    memory_rss_bytes: z.number(),
    memory_heap_used_bytes: z.number(),
    counts: z.object({ events: z.number(), vault_keys: z.number() }),
    embedded: z.object({ status: z.string(), model_id: z.string() }),
    providers: z.array(z.string()),
  })
  .meta({ id: "DaemonStatus" });

export function systemRoutes(services: Services, allRoutes: () => RouteSpec[]): RouteSpec[] {
  return [
    defineRoute({
      method: "GET",
      url: "/api/health",
      operationId: "getHealth",
      summary: "Liveness: answers without authentication",
      tag: "system",
      auth: "none",
      response: healthSchema,
      handler: () => ({ status: "ok" as const, version: services.version }),
    }),
    defineRoute({
      method: "GET",
      url: "/api/status",
      operationId: "getStatus",
      summary: "Daemon status: uptime, data directory, listen address, counts, embedded model, providers",
      tag: "system",
      response: statusSchema,
      handler: () => ({
        status: "ok" as const,
        version: services.version,
        pid: process.pid,
        uptime_secs: Math.round((Date.now() - services.startedAt.getTime()) / 1000),
        started_at: services.startedAt.toISOString(),
        data_dir: services.paths.dataDir,
        listen: { bind: services.settings.bind, port: services.port() },
        node: process.version,
        memory_rss_bytes: process.memoryUsage.rss(),
        memory_heap_used_bytes: process.memoryUsage().heapUsed,
        counts: { events: services.events.latestSeq(), vault_keys: services.vault.list().length },
        embedded: { status: services.llm.embedded.state().status, model_id: services.llm.embedded.state().model_id },
        providers: configuredProviders(services.llm.router),
      }),
    }),
    defineRoute({
      method: "GET",
      url: "/api/openapi.json",
      operationId: "getOpenApi",
      summary: "OpenAPI 3.1 description of every route",
      tag: "system",
      response: z.looseObject({ openapi: z.string(), info: z.unknown(), components: z.unknown(), paths: z.unknown() }),
      handler: () => buildOpenApi(allRoutes()),
    }),
  ];
}
