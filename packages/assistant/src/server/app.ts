import Fastify, { type FastifyInstance } from "fastify";
import type { Services } from "../runtime/services.ts";
import { writesCommitted } from "../store/writeBatch.ts";
import { AppError } from "../util/errors.ts";
import { createAuthentication } from "./authentication.ts";
import { beforeSend } from "./beforeSend.ts";
import { installBodyParsers } from "./bodyParsers.ts";
import { createBrowserGuard } from "./browserGuard.ts";
import { errorBody, errorReplier, installErrorHandlers, payloadTooLarge } from "./errors.ts";
import { registerRoutes } from "./registerRoutes.ts";
import type { RouteSpec } from "./route.ts";
import { agentRoutes } from "./routes/agents.ts";
import { authRoutes } from "./routes/auth.ts";
import { budgetRoutes } from "./routes/budget.ts";
import { calendarRoutes } from "./routes/calendar.ts";
import { dataRoutes } from "./routes/data.ts";
import { docsRoutes } from "./routes/docs.ts";
import { doctorRoutes } from "./routes/doctor.ts";
import { eventRoutes } from "./routes/events.ts";
import { memoryRoutes } from "./routes/memory.ts";
import { messageRoutes } from "./routes/message.ts";
import { missionRoutes } from "./routes/mission.ts";
import { openaiRoutes } from "./routes/openai.ts";
import { permissionRoutes } from "./routes/permissions.ts";
import { pluginRoutes } from "./routes/plugins.ts";
import { routerRoutes } from "./routes/router.ts";
import { scheduleRoutes } from "./routes/schedules.ts";
import { settingsRoutes } from "./routes/settings.ts";
import { skillRoutes } from "./routes/skills.ts";
import { systemRoutes } from "./routes/system.ts";
import { taskRoutes } from "./routes/tasks.ts";
import { timelineRoutes } from "./routes/timeline.ts";
import { toolRoutes } from "./routes/tools.ts";
import { vaultRoutes } from "./routes/vault.ts";
import { openStreams } from "./sse.ts";
import { webUi, webUiDir } from "./webUi.ts";

/** Every route of the daemon, in one list (also the source of the OpenAPI document). */
export function allRoutes(services: Services): RouteSpec[] {
  const routes: RouteSpec[] = [];
  routes.push(
    ...systemRoutes(services, () => routes),
    ...authRoutes(services),
    ...eventRoutes(services),
    ...vaultRoutes(services),
    ...doctorRoutes(services),
    ...docsRoutes(services),
    ...routerRoutes(services),
    ...budgetRoutes(services),
    ...memoryRoutes(services),
    ...timelineRoutes(services),
    ...messageRoutes(services),
    ...taskRoutes(services),
    ...agentRoutes(services),
    ...permissionRoutes(services),
    ...toolRoutes(services),
    ...settingsRoutes(services),
    ...skillRoutes(services),
    ...pluginRoutes(services),
    ...scheduleRoutes(services),
    ...calendarRoutes(services),
    ...missionRoutes(services),
    ...dataRoutes(services),
    ...openaiRoutes(services),
  );
  return routes;
}

export function buildApp(services: Services): FastifyInstance {
  const replyWithError = errorReplier(services.logger, services.settings.maxBodyBytes);
  const app = Fastify({
    logger: false,
    // Errors raised while routing (a bad %-escape, an over-long path parameter) skip every hook.
    frameworkErrors: async (error, request, reply) => {
      await beforeSend(request, reply);
      replyWithError(error, request, reply);
    },
    bodyLimit: services.settings.maxBodyBytes,
    // The real limits are ours (body size, timeouts); these keep a slow client from holding a socket forever.
    requestTimeout: 0,
    connectionTimeout: 0,
    keepAliveTimeout: 5_000,
    return503OnClosing: true,
    forceCloseConnections: "idle",
    // Requests Node's HTTP parser rejects (malformed framing, oversized headers) still get the API's error shape.
    clientErrorHandler: (error, socket) => {
      if (!socket.writable) return socket.destroy();
      const tooLarge = (error as NodeJS.ErrnoException).code === "HPE_HEADER_OVERFLOW";
      const body = JSON.stringify(
        errorBody(
          tooLarge
            ? new AppError("payload_too_large", "request headers are too large")
            : new AppError("invalid_request", "malformed HTTP request"),
        ),
      );
      socket.end(
        `HTTP/1.1 ${tooLarge ? "431 Request Header Fields Too Large" : "400 Bad Request"}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
    },
  });
  installBodyParsers(app);
  installErrorHandlers(app, replyWithError, webUi(webUiDir(services.settings.webDir)));
  app.addHook("onRequest", createBrowserGuard(services.settings, services.port));
  app.addHook("onRequest", createAuthentication(services.token, services.webSessions));
  // Fastify reads (and limits) the bodies of POST, PUT, PATCH and DELETE only; a GET announcing an over-limit
  // body is refused the same way.
  app.addHook("onRequest", async (request) => {
    if (Number(request.headers["content-length"]) > services.settings.maxBodyBytes) {
      throw payloadTooLarge(services.settings.maxBodyBytes);
    }
  });
  app.addHook("onSend", async (request, reply, payload) => {
    // What the answer reports is committed before it leaves; the answers of one loop turn share the commit
    // (store/writeBatch.ts).
    await writesCommitted(services.db);
    await beforeSend(request, reply);
    return payload;
  });
  app.addHook("onResponse", async (request, reply) => {
    if (services.logger.enabled("debug")) {
      services.logger.debug("http", {
        method: request.method,
        url: request.url.split("?")[0],
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
      });
    }
  });
  app.addHook("preClose", async () => {
    for (const stream of openStreams) stream.raw.end();
    openStreams.clear();
  });

  registerRoutes(app, allRoutes(services), {
    // Set by the tests only: answers are checked against their declarations (registerRoutes.ts).
    ...(services.settings.validateResponses ? { checkAnswers: services.logger } : {}),
  });
  return app;
}
