import type { FastifyReply, FastifyRequest } from "fastify";
import type { z } from "zod";

export type HttpMethod = "GET" | "POST" | "PUT" | "DELETE" | "PATCH";

/** How a route authenticates: the API token or session cookie (default), nothing, or its own signature check. */
export type RouteAuth = "token" | "none" | "signature";

export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
}

/**
 * One HTTP route, declared once: its zod schemas validate requests and generate the OpenAPI document.
 * Handlers return the response body (JSON); set `status` for a non-200 success.
 */
export interface RouteSpec<P = unknown, Q = unknown, B = unknown> {
  method: HttpMethod;
  url: string;
  summary: string;
  tag: string;
  auth?: RouteAuth;
  params?: z.ZodType<P>;
  query?: z.ZodType<Q>;
  body?: z.ZodType<B>;
  response?: z.ZodType;
  status?: number;
  /** The handler writes the reply itself (streams, HTML, redirects); no JSON response schema. */
  raw?: { contentType: string };
  handler: (input: RouteInput<P, Q, B>, request: FastifyRequest, reply: FastifyReply) => unknown | Promise<unknown>;
}

/** Keeps the handler's input types tied to its schemas while storing routes in one heterogeneous list. */
export function defineRoute<P = undefined, Q = undefined, B = undefined>(spec: RouteSpec<P, Q, B>): RouteSpec {
  return spec as unknown as RouteSpec;
}
