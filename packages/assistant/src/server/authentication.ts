import type { FastifyReply, FastifyRequest } from "fastify";
import { secretsEqual } from "../auth/authToken.ts";
import type { WebSessions } from "../auth/webSessions.ts";
import { AppError } from "../util/errors.ts";
import type { RouteAuth } from "./route.ts";

export const SESSION_COOKIE = "assistant_session";

/**
 * Every /api/* and /v1/* route needs `Authorization: Bearer <token>` or the session cookie, unless the route
 * declares `auth: "none"` or `"signature"` (it then authenticates itself). Unknown paths under /api are
 * authenticated too, so they reveal nothing to an anonymous caller.
 */
export function createAuthentication(token: string, sessions: WebSessions) {
  return async function authenticate(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const auth = (request.routeOptions.config as { auth?: RouteAuth } | undefined)?.auth;
    const path = request.url.split("?")[0] ?? "";
    const protectedPath = path.startsWith("/api/") || path === "/api" || path.startsWith("/v1/") || path === "/metrics";
    if (auth === "none" || auth === "signature" || (auth === undefined && !protectedPath)) return;

    const header = request.headers.authorization;
    if (header !== undefined) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (match && secretsEqual(match[1]!, token)) return;
      throw new AppError("unauthorized", "invalid API token (the CLI reads it from the data directory's auth_token)");
    }
    const cookie = readCookie(request.headers.cookie, SESSION_COOKIE);
    if (cookie !== undefined && sessions.isValid(cookie)) return;
    throw new AppError(
      "unauthorized",
      "authentication required: send Authorization: Bearer <token> or log in with `assistant open`",
    );
  };
}

export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
