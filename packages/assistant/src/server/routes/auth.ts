import { z } from "zod";
import type { Services } from "../../runtime/services.ts";
import { SESSION_COOKIE } from "../authentication.ts";
import { defineRoute, type RouteSpec } from "../route.ts";

const loginCodeSchema = z
  .object({ code: z.string(), url: z.string(), expires_in: z.number() })
  .meta({ id: "LoginCode" });

const EXPIRED_PAGE = `<!doctype html><meta charset="utf-8"><title>assistant: login link not valid</title>
<p>This login link has expired or was already used. Run <code>assistant open</code> for a new one.</p>`;

export function authRoutes(services: Services): RouteSpec[] {
  return [
    defineRoute({
      method: "POST",
      url: "/api/auth/login-code",
      operationId: "createLoginCode",
      summary: "One-time browser login code (valid 120 s, usable once); never returns the API token",
      tag: "auth",
      status: 201,
      response: loginCodeSchema,
      handler: (_input, request) => {
        const { code, expiresIn } = services.loginCodes.issue();
        const host = request.headers.host ?? `127.0.0.1:${services.port()}`;
        return { code, url: `http://${host}/login?code=${encodeURIComponent(code)}`, expires_in: expiresIn };
      },
    }),
    defineRoute({
      method: "GET",
      url: "/login",
      operationId: "login",
      summary: "Exchanges a login code for the HttpOnly session cookie and redirects to the web UI",
      tag: "auth",
      auth: "none",
      query: z.object({ code: z.string().max(256).default("") }),
      raw: {
        303: { description: "the code was valid: Set-Cookie carries the session cookie, Location is /chat" },
        401: { description: "the code is unknown, used or expired: a page saying so", contentType: "text/html" },
      },
      handler: ({ query }, _request, reply) => {
        if (!services.loginCodes.consume(query.code)) {
          return reply
            .status(401)
            .type("text/html; charset=utf-8")
            .header("cache-control", "no-store")
            .send(EXPIRED_PAGE);
        }
        const session = services.webSessions.create();
        return reply
          .header(
            "set-cookie",
            `${SESSION_COOKIE}=${session.value}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${session.maxAgeSecs}`,
          )
          .header("cache-control", "no-store")
          .redirect("/chat", 303);
      },
    }),
  ];
}
