import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import type { FastifyRequest } from "fastify";
import { AppError } from "../util/errors.ts";
import { errorBody, type NotFoundFallback } from "./errors.ts";

// Serves the web UI's build (packages/web/dist) at `/`: a file of the build when the path names one, else
// index.html, so the app's own paths (/chat, /settings...) load it (client routing). The API's prefixes stay the
// API's. Files are read by @fastify/send (the file engine of @fastify/static), loaded on the first request so the
// daemon's start-up does not pay for it; it refuses paths that climb out of the folder and dotfiles.

const API_PREFIXES = ["/api", "/v1", "/login", "/metrics", "/channels"];

/** The app loads its own script and style only; it talks to this daemon only; no page may frame it. */
export const WEB_UI_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const NOT_BUILT =
  "The assistant's web UI is not built. Run `npm run build` in the assistant's folder, then reload this page.\n";

/** The folder of the built web UI: ASSISTANT_WEB_DIR, else the dist/ of the installed @assistant/web package. */
export function webUiDir(configured: string | undefined): string | undefined {
  if (configured) return resolve(configured);
  try {
    return join(dirname(createRequire(import.meta.url).resolve("@assistant/web/package.json")), "dist");
  } catch {
    return undefined;
  }
}

// Not a wildcard route: a path no route matches must still reach the API's own refusals (an over-long id in a
// path is a 400), so the UI answers where the daemon would otherwise answer 404 (errors.ts).
/** The web UI's answers: GET and HEAD of a path outside the API's prefixes, in place of a 404. */
export function webUi(dir: string | undefined): NotFoundFallback {
  let sendFile: typeof import("@fastify/send").default | undefined;
  return {
    serves(request) {
      const path = request.url.split("?")[0] ?? "/";
      return (
        (request.method === "GET" || request.method === "HEAD") &&
        !API_PREFIXES.some((prefix) => path === prefix || path.startsWith(`${prefix}/`))
      );
    },
    async answer(request, reply) {
      const path = request.url.split("?")[0] ?? "/";
      reply.header("content-security-policy", WEB_UI_CSP).header("x-frame-options", "DENY");
      if (!dir || !existsSync(join(dir, "index.html"))) {
        return reply.status(503).type("text/plain; charset=utf-8").header("cache-control", "no-store").send(NOT_BUILT);
      }
      sendFile ??= (await import("@fastify/send")).default;
      // A last segment without a dot is a path of the app, not a file: the app answers it.
      const isAppPath = !/\.[^/]*$/.test(path);
      const file = await sendFile(request.raw, isAppPath ? "/index.html" : path, { root: dir });
      if (file.type === "error") {
        file.stream.destroy();
        const status = file.statusCode === 403 ? 403 : 404;
        const error = status === 403 ? new AppError("forbidden", "path not allowed") : notFound(request);
        return reply.status(status).send(errorBody(error));
      }
      // Built assets carry a content hash in their name and never change; the page itself is always revalidated.
      const cache = path.startsWith("/assets/") ? "public, max-age=31536000, immutable" : "no-cache";
      return reply
        .status(file.statusCode)
        .headers({ ...file.headers, "cache-control": cache })
        .send(file.stream);
    },
  };
}

function notFound(request: FastifyRequest): AppError {
  return new AppError("not_found", `no route ${request.method} ${request.url.split("?")[0]}`);
}
