import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import type { Logger } from "../log/logger.ts";
import { AppError, ERROR_CODES, isAppError } from "../util/errors.ts";

/** The one error body of the API (docs/http-api.md#errors). */
export const errorBodySchema = z
  .object({
    error: z.object({
      code: z.enum(ERROR_CODES),
      message: z.string(),
      details: z.record(z.string(), z.unknown()).optional(),
    }),
  })
  .meta({ id: "Error" });

export type ErrorBody = z.infer<typeof errorBodySchema>;

export function errorBody(error: AppError): ErrorBody {
  return { error: { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) } };
}

export function payloadTooLarge(maxBodyBytes: number): AppError {
  return new AppError("payload_too_large", `request body is larger than the limit of ${maxBodyBytes} bytes`);
}

// Fastify's own errors, translated to the API's codes and to messages a person can act on.
function fromFastify(error: FastifyError, maxBodyBytes: number): AppError | undefined {
  switch (error.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return payloadTooLarge(maxBodyBytes);
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return new AppError("unsupported_media_type", "send the request body as application/json");
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return new AppError("invalid_request", "the request says it carries JSON but the body is empty", {
        field: "body",
      });
    case "FST_ERR_CTP_INVALID_JSON_BODY":
      return new AppError("invalid_request", "request body is not valid JSON", { field: "body" });
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return new AppError("invalid_request", "Content-Length does not match the body");
    case "FST_ERR_BAD_URL":
      return new AppError("invalid_request", "the URL is not valid: a path segment has a bad %-escape", {
        field: "url",
      });
    case "FST_ERR_MAX_PARAM_LENGTH":
      return new AppError("invalid_request", "an id or name in the URL is too long", {
        field: "url",
      });
  }
  if (error instanceof SyntaxError || (error.statusCode === 400 && /JSON/i.test(error.message))) {
    return new AppError("invalid_request", "request body is not valid JSON", { field: "body" });
  }
  if (error.statusCode === 413) return new AppError("payload_too_large", "request body is too large");
  if (error.statusCode === 415)
    return new AppError("unsupported_media_type", "send the request body as application/json");
  if (error.statusCode === 429) return new AppError("rate_limited", "too many requests; retry later");
  if (error.statusCode === 404) return new AppError("not_found", error.message);
  // Any other request error Fastify raises: its message names the problem, the shape is ours.
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    return new AppError("invalid_request", error.message);
  }
  return undefined;
}

export type ErrorReplier = (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => FastifyReply;

/**
 * Answers an error in the API's shape: an AppError as it is, Fastify's own errors translated, anything else a
 * 500. Both the error handler and Fastify's `frameworkErrors` (errors raised while routing, before any hook:
 * bad %-escapes, over-long path parameters) answer through it.
 */
export function errorReplier(logger: Logger, maxBodyBytes: number): ErrorReplier {
  return (error, request, reply) => {
    const known = isAppError(error) ? error : fromFastify(error, maxBodyBytes);
    if (!known) {
      // The stack goes to the log only; the client gets a generic message.
      logger.error("unhandled error", {
        method: request.method,
        url: request.url,
        error: error.message,
        stack: error.stack,
      });
      return reply.status(500).send(errorBody(new AppError("internal", "internal error; see the daemon log")));
    }
    if (known.code === "rate_limited" && !reply.getHeader("retry-after")) reply.header("retry-after", "60");
    return reply.status(known.status).send(errorBody(known));
  };
}

/** Pages answered where the API would answer 404 (the web UI: webUi.ts). */
export interface NotFoundFallback {
  serves(request: FastifyRequest): boolean;
  answer(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply>;
}

/** The error handler, and the 404 answer of paths no route has; the web UI answers those of its own paths. */
export function installErrorHandlers(app: FastifyInstance, replyWithError: ErrorReplier, ui?: NotFoundFallback): void {
  app.setErrorHandler(replyWithError);
  app.setNotFoundHandler((request, reply) => {
    if (ui?.serves(request)) return ui.answer(request, reply);
    reply
      .status(404)
      .send(errorBody(new AppError("not_found", `no route ${request.method} ${request.url.split("?")[0]}`)));
  });
}
