import { z } from "zod";
import type { ErrorCode } from "../util/errors.ts";
import { ERROR_STATUS } from "../util/errors.ts";
import { VERSION } from "../version.ts";
import { errorBodySchema } from "./errors.ts";
import { declaredErrors, type RouteSpec } from "./route.ts";

// `GET /api/openapi.json`: derived from the same route list that the server registers, so it cannot drift. Record
// schemas named with `.meta({ id })` become components (`#/components/schemas/Task`) that every operation
// references; request schemas are inlined, as the fuzzer and simple clients read them.

type Json = Record<string, unknown>;

const ERROR_MEANING: Record<ErrorCode, string> = {
  invalid_request: "the request is malformed (`details.field` names the parameter or body field)",
  unauthorized: "no or wrong token or session cookie",
  forbidden: "the Host or Origin is refused (browser guard)",
  policy_denied: "the tool policy refuses the call (`details.rule` names the rule)",
  not_found: "the id or name in the path, or one the body names, does not exist",
  conflict: "the record is in a state that does not allow this",
  payload_too_large: "the body is over ASSISTANT_MAX_BODY_BYTES",
  unsupported_media_type: "the body is not JSON",
  rate_limited: "too many requests (see Retry-After)",
  budget_exceeded: "the chat session spent its token or cost budget (/api/budget)",
  internal: "a bug: the details are in the daemon log, never in the answer",
  provider_error: "the model provider answered an error",
  provider_unavailable: "no model provider of the route can be reached",
  provider_timeout: "the model provider did not answer in time",
  config_invalid: "a configuration file does not validate (`details` name the file and key)",
  vault_locked: "the vault cannot be opened",
};

const REF_PREFIX = "#/$defs/";
const COMPONENT_PREFIX = "#/components/schemas/";

/** Rewrites `#/$defs/X` references: to components (output), or to the definition itself (input). */
function relink(value: unknown, defs: Json, inline: boolean): unknown {
  if (Array.isArray(value)) return value.map((item) => relink(item, defs, inline));
  if (value === null || typeof value !== "object") return value;
  const object = value as Json;
  const ref = object.$ref;
  if (typeof ref === "string" && ref.startsWith(REF_PREFIX)) {
    const name = ref.slice(REF_PREFIX.length);
    if (inline) return relink({ ...(defs[name] as Json), ...without(object, "$ref") }, defs, true);
    return { ...object, $ref: `${COMPONENT_PREFIX}${name}` };
  }
  return Object.fromEntries(Object.entries(object).map(([key, item]) => [key, relink(item, defs, inline)]));
}

function without(object: Json, key: string): Json {
  const { [key]: _dropped, ...rest } = object;
  return rest;
}

class SchemaWriter {
  readonly components: Json = {};

  /** The JSON Schema of a zod schema; named output schemas land in components and are referenced. */
  write(schema: z.ZodType, io: "input" | "output"): Json {
    const json = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as Json;
    const defs = (json.$defs ?? {}) as Json;
    const body = without(without(json, "$schema"), "$defs");
    if (io === "input") return relink(body, defs, true) as Json;
    for (const [name, def] of Object.entries(defs)) {
      const linked = relink(def, defs, false);
      const known = this.components[name];
      if (known !== undefined && JSON.stringify(known) !== JSON.stringify(linked)) {
        throw new Error(`two different schemas are named ${name}: give one of them another id`);
      }
      this.components[name] = linked;
    }
    return relink(body, defs, false) as Json;
  }
}

function parametersOf(route: RouteSpec, writer: SchemaWriter): Json[] {
  const parameters: Json[] = [];
  for (const [where, schema] of [
    ["path", route.params],
    ["query", route.query],
  ] as const) {
    if (!schema) continue;
    const json = writer.write(schema, "input") as { properties?: Json; required?: string[] };
    for (const [name, property] of Object.entries(json.properties ?? {})) {
      parameters.push({
        name,
        in: where,
        required: where === "path" || (json.required ?? []).includes(name),
        schema: property,
      });
    }
  }
  return parameters;
}

function requestBodyOf(route: RouteSpec, writer: SchemaWriter): Json | undefined {
  if (!route.body) return undefined;
  const schema = writer.write(route.body, "input");
  const types = ["application/json", ...(route.bodyTypes ?? [])];
  return {
    required: !route.body.safeParse(undefined).success,
    content: Object.fromEntries(types.map((type) => [type, { schema }])),
  };
}

/** Every answer of the route by status: its successes, then its errors grouped by status. */
function responsesOf(route: RouteSpec, writer: SchemaWriter): Json {
  const responses: Record<string, Json> = {};
  if (route.raw) {
    for (const [status, answer] of Object.entries(route.raw)) {
      responses[status] = {
        description: answer.description,
        ...(answer.contentType
          ? {
              content: { [answer.contentType]: answer.schema ? { schema: writer.write(answer.schema, "output") } : {} },
            }
          : {}),
      };
    }
  } else {
    const success = route.status ?? 200;
    for (const [status, schema] of [[success, route.response], ...Object.entries(route.responses ?? {})] as const) {
      responses[String(status)] = {
        description: Number(status) === success ? "success" : `success (${status})`,
        content: { "application/json": { schema: writer.write(schema, "output") } },
      };
    }
    if (route.events) {
      const stream = { "text/event-stream": { schema: writer.write(route.events, "output") } };
      const ok = responses["200"];
      responses["200"] = ok
        ? { ...ok, content: { ...(ok.content as Json), ...stream } }
        : { description: "the event stream", content: stream };
    }
  }
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of declaredErrors(route)) {
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const error = writer.write(errorBodySchema, "output");
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    if (responses[String(status)]) continue; // the route answers this status itself (the login page's 401)
    responses[String(status)] = {
      description: codes.map((code) => `\`${code}\`: ${ERROR_MEANING[code]}`).join("; "),
      content: { "application/json": { schema: error } },
    };
  }
  return responses;
}

function buildDocument(routes: RouteSpec[]): Json {
  const writer = new SchemaWriter();
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    const path = route.url.replace(/:([A-Za-z_]+)/g, "{$1}");
    const parameters = parametersOf(route, writer);
    const requestBody = requestBodyOf(route, writer);
    const operation: Json = {
      operationId: route.operationId,
      summary: route.summary,
      tags: [route.tag],
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(requestBody ? { requestBody } : {}),
      responses: responsesOf(route, writer),
      security: (route.auth ?? "token") === "token" ? [{ bearer: [] }, { session: [] }] : [],
    };
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: operation };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "assistant daemon API",
      version: VERSION,
      description:
        "Every operation lists each status it can answer. Errors share one body (components/schemas/Error); lists are pages {items, next_cursor} (pass next_cursor back as cursor); server-sent events are described as one message (id, event, data) per event type. See docs/http-api.md.",
    },
    components: {
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "the token in the data directory's auth_token" },
        session: { type: "apiKey", in: "cookie", name: "assistant_session" },
      },
      schemas: writer.components,
    },
    paths,
  };
}

const built = new WeakMap<RouteSpec[], Json>();

/** The OpenAPI 3.1 document of these routes (built once per route list). */
export function buildOpenApi(routes: RouteSpec[]): Json {
  let document = built.get(routes);
  if (!document) {
    document = buildDocument(routes);
    built.set(routes, document);
  }
  return document;
}
