import { z } from "zod";
import { classificationSchema, classifyMessage } from "../../llm/classify.ts";
import { routeTargetRefSchema } from "../../llm/defaultRoute.ts";
import { resolveEmbeddedModel } from "../../llm/embedded/catalogue.ts";
import { downloadProgressSchema, downloadTarget } from "../../llm/embedded/download.ts";
import { ProviderFailure } from "../../llm/errors.ts";
import { metricsSnapshotSchema } from "../../llm/metrics.ts";
import { listAllModels, providerModelsSchema } from "../../llm/models.ts";
import { editableRouterFile, listRoutes, routeViewSchema, setRoute } from "../../llm/routeEditor.ts";
import { embeddedCalibrationSchema, embeddedStateSchema } from "../../llm/types.ts";
import type { Services } from "../../runtime/services.ts";
import { AppError } from "../../util/errors.ts";
import { defineRoute, type RouteSpec } from "../route.ts";

// The router's HTTP surface (docs/models.md): thin adapters over llm/.

export function routerRoutes(services: Services): RouteSpec[] {
  const { llm, paths } = services;
  const embeddedModel = () => resolveEmbeddedModel(services.settings, paths);
  return [
    defineRoute({
      method: "GET",
      url: "/api/router/routes",
      operationId: "listRouterRoutes",
      summary: "Primary and fallback model per category (the route each task type uses)",
      tag: "router",
      response: z.object({ items: z.array(routeViewSchema) }),
      handler: () => ({ items: listRoutes(llm.router.configuration) }),
    }),
    defineRoute({
      method: "PUT",
      url: "/api/router/routes/:category",
      operationId: "setRouterRoute",
      summary: "Sets a category's model; the previous primary becomes the first fallback; saved to llm_router.yaml",
      tag: "router",
      params: z.object({ category: z.string().min(1).max(64) }),
      body: z.strictObject({ provider: z.string().min(1).max(64), model: z.string().min(1).max(256) }),
      response: routeViewSchema.extend({ file: z.string() }).meta({ id: "SavedRoute" }),
      errors: ["config_invalid"],
      handler: ({ params, body }) => {
        const result = setRoute(editableRouterFile(paths), params.category, body.provider, body.model);
        llm.router.reload();
        return {
          category: result.category,
          primary: result.primary,
          fallback: result.fallback,
          source: "file" as const,
          file: result.file,
        };
      },
    }),
    defineRoute({
      method: "GET",
      url: "/api/router/models",
      operationId: "listModels",
      summary: "Every model of every configured provider, with metadata; unreachable providers carry an error",
      tag: "router",
      response: z.object({ providers: z.array(providerModelsSchema) }),
      handler: async () => ({ providers: await listAllModels(llm.router) }),
    }),
    defineRoute({
      method: "GET",
      url: "/api/router/classify",
      operationId: "classifyMessage",
      summary: "Which of the six chat categories a message is classified into, and the route it would use",
      tag: "router",
      query: z.object({ message: z.string().min(1).max(20_000) }),
      response: classificationSchema
        .extend({ route: z.object({ source: z.string(), targets: z.array(routeTargetRefSchema) }) })
        .meta({ id: "Classification" }),
      handler: ({ query }) => {
        const result = classifyMessage(query.message);
        const route = llm.router.resolve(result.category);
        return {
          ...result,
          route: {
            source: route.source,
            targets: route.targets.map((t) => ({ provider: t.provider, model: t.model })),
          },
        };
      },
    }),
    defineRoute({
      method: "GET",
      url: "/api/router/embedded",
      operationId: "getEmbeddedModel",
      summary: "Embedded model state (unloaded, downloading, loading, loaded, failed), threads, context, calibration",
      tag: "router",
      response: embeddedStateSchema,
      handler: () => llm.embedded.state(),
    }),
    defineRoute({
      method: "POST",
      url: "/api/router/embedded/reload",
      operationId: "reloadEmbeddedModel",
      summary: "Unloads the embedded model's weights; the next request that needs it loads them again",
      tag: "router",
      response: embeddedStateSchema,
      handler: async () => {
        await llm.embedded.unload();
        return llm.embedded.state();
      },
    }),
    defineRoute({
      method: "POST",
      url: "/api/router/embedded/calibrate",
      operationId: "calibrateEmbeddedModel",
      summary: "Measures tokens/s with a few thread counts, keeps the fastest settings and stores them",
      tag: "router",
      response: embeddedCalibrationSchema,
      errors: ["provider_unavailable"],
      handler: async (_input, _request, reply) => {
        const aborted = new AbortController();
        // The reply's close, not the request's: the request closes as soon as its body has been read.
        reply.raw.on("close", () => aborted.abort());
        try {
          return await llm.embedded.calibrate(aborted.signal);
        } catch (error) {
          // No model yet, or it cannot load: say why, as a provider error, not a bug.
          if (error instanceof ProviderFailure) {
            throw new AppError("provider_unavailable", `cannot calibrate the embedded model: ${error.message}`);
          }
          throw error;
        }
      },
    }),
    defineRoute({
      method: "POST",
      url: "/api/router/embedded/download",
      operationId: "startEmbeddedDownload",
      summary: "Starts (or resumes) the embedded model download; answers its progress at once",
      tag: "router",
      status: 202,
      response: downloadProgressSchema,
      errors: ["conflict"],
      handler: () => {
        const model = embeddedModel();
        if (model.custom) {
          throw new AppError(
            "conflict",
            `ASSISTANT_EMBEDDED_MODEL_PATH names a local file (${model.path}); there is nothing to download`,
          );
        }
        return llm.downloader.start(downloadTarget(model));
      },
    }),
    defineRoute({
      method: "GET",
      url: "/api/router/embedded/download",
      operationId: "getEmbeddedDownload",
      summary: "Progress of the embedded model download (status idle, running, verifying, completed, failed)",
      tag: "router",
      response: downloadProgressSchema,
      handler: () => {
        const model = embeddedModel();
        return llm.downloader.progress(model.path);
      },
    }),
    defineRoute({
      method: "GET",
      url: "/api/router/metrics",
      operationId: "getRouterMetrics",
      summary: "Router metrics per provider/model: calls, failures, retries, fallbacks, latency, tokens, cost",
      tag: "router",
      response: metricsSnapshotSchema,
      handler: () => llm.metrics.snapshot(),
    }),
    defineRoute({
      method: "GET",
      url: "/metrics",
      operationId: "getPrometheusMetrics",
      summary: "Router metrics in Prometheus text format (authentication required)",
      tag: "router",
      raw: { 200: { description: "the router metrics as Prometheus text", contentType: "text/plain; version=0.0.4" } },
      handler: (_input, _request, reply) => {
        reply.type("text/plain; version=0.0.4; charset=utf-8").send(llm.metrics.prometheus());
      },
    }),
  ];
}
