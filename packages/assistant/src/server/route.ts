import type { FastifyReply, FastifyRequest } from "fastify";
import type { z } from "zod";
import type { ErrorCode } from "../util/errors.ts";

export type HttpMethod = "GET" | "POST" | "PUT" | "DELETE" | "PATCH";

/** How a route authenticates: the API token or session cookie (default), nothing, or its own signature check. */
export type RouteAuth = "token" | "none" | "signature";

export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
}

/** An answer the handler writes itself (HTML, a redirect, Prometheus text, an event stream), by status. */
export interface RawAnswer {
  description: string;
  /** Absent for an answer without a body (a redirect). */
  contentType?: string;
  /** What the body holds; for `text/event-stream`, one event message (`id`, `event`, `data`) of the stream. */
  schema?: z.ZodType;
}

interface RouteBase<P, Q, B> {
  method: HttpMethod;
  url: string;
  /** The operation's stable name in the OpenAPI document and the generated client: `listTasks`, `getTask`. */
  operationId: string;
  summary: string;
  tag: string;
  auth?: RouteAuth;
  params?: z.ZodType<P>;
  query?: z.ZodType<Q>;
  body?: z.ZodType<B>;
  /** Body media types accepted besides JSON (the mission file takes YAML too). */
  bodyTypes?: string[];
  /** Errors this route answers besides the ones every route can (see openapi.ts `commonErrors`). */
  errors?: ErrorCode[];
  handler: (input: RouteInput<P, Q, B>, request: FastifyRequest, reply: FastifyReply) => unknown | Promise<unknown>;
}

/** A JSON route: the handler returns the body of `status` (default 200), or sets another success status. */
interface JsonRoute {
  response: z.ZodType;
  status?: number;
  /** Other success answers by status (a 202 while a call waits for approval, a 201 for a new item). */
  responses?: Record<number, z.ZodType>;
  /** The server-sent events the route streams instead of JSON when the request asks for a stream. */
  events?: z.ZodType;
  raw?: undefined;
}

/** A route whose handler writes the reply itself (streams, HTML, redirects). */
interface RawRoute {
  raw: Record<number, RawAnswer>;
  response?: undefined;
  status?: undefined;
  responses?: undefined;
  events?: undefined;
}

/**
 * One HTTP route, declared once: its zod schemas validate requests, check answers in test runs (registerRoutes.ts)
 * and generate the OpenAPI document. Every JSON route declares its response.
 */
export type RouteSpec<P = unknown, Q = unknown, B = unknown> = RouteBase<P, Q, B> & (JsonRoute | RawRoute);

/** Keeps the handler's input types tied to its schemas while storing routes in one heterogeneous list. */
export function defineRoute<P = undefined, Q = undefined, B = undefined>(spec: RouteSpec<P, Q, B>): RouteSpec {
  return spec as unknown as RouteSpec;
}

/** The schema of a JSON answer with this status, if the route declares one. */
export function responseSchema(route: RouteSpec, status: number): z.ZodType | undefined {
  if (route.raw) return undefined;
  return status === (route.status ?? 200) ? route.response : route.responses?.[status];
}

/**
 * The errors a route can answer: its own, plus what every route can meet before or around its handler (a bad URL
 * or input, the browser guard, the body limit, a body that is not JSON, a bug) and, unless it needs no token,
 * a missing or wrong one.
 */
export function declaredErrors(route: RouteSpec): ErrorCode[] {
  const common: ErrorCode[] = ["invalid_request", "forbidden", "payload_too_large", "internal"];
  if ((route.auth ?? "token") !== "none") common.push("unauthorized");
  if (route.method !== "GET") common.push("unsupported_media_type");
  return [...new Set([...common, ...(route.errors ?? [])])];
}
