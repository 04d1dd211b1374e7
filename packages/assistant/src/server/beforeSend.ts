import type { FastifyReply, FastifyRequest } from "fastify";
import { drainUnreadBody } from "./drainBody.ts";

/**
 * What every answer gets before it is sent: the security headers, and the unread rest of its request body
 * discarded (an answer given before its body was read: a 413, a route without a body), so that closing the
 * connection afterwards cannot reset it under the client (drainBody.ts). Runs as the onSend hook, and for
 * Fastify's `frameworkErrors`, which bypass the hooks.
 */
export async function beforeSend(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  reply.header("x-content-type-options", "nosniff");
  reply.header("referrer-policy", "no-referrer");
  if (!(await drainUnreadBody(request.raw))) reply.header("connection", "close");
}
