import Fastify, { type FastifyInstance } from "fastify";
import type { Services } from "../runtime/services.ts";
import { createAuthentication } from "./authentication.ts";
import { createBrowserGuard } from "./browserGuard.ts";
import { installErrorHandlers } from "./errors.ts";
import { registerRoutes } from "./registerRoutes.ts";
import type { RouteSpec } from "./route.ts";
import { authRoutes } from "./routes/auth.ts";
import { eventRoutes } from "./routes/events.ts";
import { systemRoutes } from "./routes/system.ts";
import { vaultRoutes } from "./routes/vault.ts";
import { openStreams } from "./sse.ts";

/** Every route of the daemon, in one list (also the source of the OpenAPI document). */
export function allRoutes(services: Services): RouteSpec[] {
  const routes: RouteSpec[] = [];
  routes.push(
    ...systemRoutes(services, () => routes),
    ...authRoutes(services),
    ...eventRoutes(services),
    ...vaultRoutes(services),
  );
  return routes;
}

export function buildApp(services: Services): FastifyInstance {
  const app = Fastify({
    logger: false,
    bodyLimit: services.settings.maxBodyBytes,
    // The real limits are ours (body size, timeouts); these keep a slow client from holding a socket forever.
    requestTimeout: 0,
    connectionTimeout: 0,
    keepAliveTimeout: 5_000,
    return503OnClosing: true,
    forceCloseConnections: "idle",
  });
  app.removeContentTypeParser("text/plain"); // JSON only: anything else is 415

  installErrorHandlers(app, services.logger, services.settings.maxBodyBytes);
  app.addHook("onRequest", createBrowserGuard(services.settings, services.port));
  app.addHook("onRequest", createAuthentication(services.token, services.webSessions));
  app.addHook("onSend", async (_request, reply, payload) => {
    reply.header("x-content-type-options", "nosniff");
    reply.header("referrer-policy", "no-referrer");
    return payload;
  });
  app.addHook("onResponse", async (request, reply) => {
    if (services.logger.enabled("debug")) {
      services.logger.debug("http", { method: request.method, url: request.url.split("?")[0], status: reply.statusCode, ms: Math.round(reply.elapsedTime) });
    }
  });
  app.addHook("preClose", async () => {
    for (const stream of openStreams) stream.raw.end();
    openStreams.clear();
  });

  registerRoutes(app, allRoutes(services));
  return app;
}
