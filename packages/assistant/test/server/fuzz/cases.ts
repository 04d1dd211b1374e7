import type { Random } from "./random.ts";
import { deepJson, HUGE_NUMBERS, type JsonSchema, plausibleValue, RawJson, toJson, wrongValue } from "./values.ts";

// Fuzz requests generated from /api/openapi.json: every operation in turn, each with one mutation drawn from the
// seeded PRNG. No route stops the daemon (there is no shutdown route; the /restart slash command only acts under
// the supervisor, and the fuzz daemon runs without one), so every operation is fuzzed.

export interface OpenApiParameter {
  name: string;
  in: "path" | "query";
  required: boolean;
  schema: JsonSchema;
}

export interface OpenApiOperation {
  parameters?: OpenApiParameter[];
  requestBody?: { content: Record<string, { schema: JsonSchema }> };
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
}

export const FUZZ_KINDS = [
  "plausible",
  "wrong_type",
  "huge_number",
  "deep",
  "wide",
  "malformed",
  "over_limit",
  "content_type",
  "odd_path",
  "many_params",
  "method",
  "no_auth",
  "prototype",
] as const;
export type FuzzKind = (typeof FUZZ_KINDS)[number];

export interface FuzzRequest {
  kind: FuzzKind;
  /** The operation it was made from, e.g. "PUT /api/vault". */
  operation: string;
  method: string;
  /** Path and query, already encoded (or deliberately mis-encoded). */
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** Sent with Transfer-Encoding: chunked instead of Content-Length. */
  chunked?: boolean;
}

export interface FuzzContext {
  random: Random;
  token: string;
  maxBodyBytes: number;
}

interface Operation {
  method: string;
  template: string;
  spec: OpenApiOperation;
}

export function operationsOf(doc: OpenApiDocument): Operation[] {
  return Object.entries(doc.paths).flatMap(([template, methods]) =>
    Object.entries(methods).map(([method, spec]) => ({ method: method.toUpperCase(), template, spec })),
  );
}

const MALFORMED = [
  "{",
  '{"a":}',
  "[1,2",
  "nul",
  Buffer.from([0xff, 0xfe, 0x7b, 0x7d]), // not UTF-8
  '{"a":1}garbage',
  '"\\ud800"',
  "\ufeff{}",
  "",
  " ",
  "NaN",
  '{"a":1,"a":2}',
  "{'a':1}",
];
const CONTENT_TYPES = [
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/json; charset=utf-16",
  "application/yaml",
  "text/yaml",
  "application/xml",
  "application/json, text/html",
  "APPLICATION/JSON",
  "*/*",
  "application/json;;;",
  "application/octet-stream",
];
// YAML bodies: PUT /api/autonomous-mission parses them, every other route refuses them.
const YAML_BODIES = [
  "objective: fuzz\n",
  "a: [\n",
  "a: &x [*x]\n",
  `objective: ${"[".repeat(3000)}${"]".repeat(3000)}\n`,
  `objective:\n${Array.from({ length: 300 }, (_, i) => `${" ".repeat(i + 1)}k${i}:`).join("\n")} end\n`,
  "a: &a [1,1,1,1]\nb: &b [*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b]\nd: [*c,*c,*c,*c,*c,*c]\n",
];
const ODD_SEGMENTS = ["%ff", "%", "%zz", "%00", "..%2f..%2fetc", "%2e%2e", "x".repeat(2000), "%E2%82", ";", "a%20b"];
const METHODS = ["PATCH", "OPTIONS", "HEAD", "TRACE", "PROPFIND", "PURGE", "FOO", "GET", "POST", "PUT", "DELETE"];
const DEPTHS = [65, 100, 1000, 5000, 20000];
const WIDTHS = [1000, 5000, 20000];

function bodySchema(op: Operation): JsonSchema | undefined {
  return op.spec.requestBody?.content["application/json"]?.schema;
}

function paramText(value: unknown): string {
  return typeof value === "string" ? value : toJson(value);
}

function fillPath(op: Operation, random: Random, odd?: string): string {
  const params = (op.spec.parameters ?? []).filter((p) => p.in === "path");
  let path = op.template;
  for (const param of params) {
    const value = odd ?? encodeURIComponent(paramText(plausibleValue(param.schema, random)) || "x");
    path = path.replace(`{${param.name}}`, value);
  }
  if (odd && params.length === 0) {
    const segments = path.split("/");
    segments[random.int(1, segments.length - 1)] = odd;
    path = segments.join("/");
  }
  return path;
}

function plausibleQuery(op: Operation, random: Random): string[] {
  return (op.spec.parameters ?? [])
    .filter((p) => p.in === "query" && (p.required || random.chance(0.6)))
    .map((p) => `${p.name}=${encodeURIComponent(paramText(plausibleValue(p.schema, random)))}`);
}

function withQuery(path: string, pairs: string[]): string {
  return pairs.length > 0 ? `${path}?${pairs.join("&")}` : path;
}

/** The body with one property (or the whole body) replaced. */
function replaceOne(op: Operation, random: Random, value: unknown): unknown {
  const schema = bodySchema(op);
  const names = Object.keys(schema?.properties ?? {});
  if (names.length === 0) return random.chance(0.5) ? value : { [random.pick(["objective", "a"])]: value };
  const body = (schema ? plausibleValue(schema, random) : {}) as Record<string, unknown>;
  return { ...body, [random.pick(names)]: value };
}

function asObject(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

const JSON_HEADERS = { "content-type": "application/json" };

// Mostly just over the limit; now and then far over it, where answering early used to reset the connection.
function overLimitBody(maxBodyBytes: number, random: Random): string {
  const size = Math.min(random.pick([1, 1, 2, 64]) * maxBodyBytes, 8 * 1024 * 1024) + random.int(1, maxBodyBytes);
  return `{"a":"${"x".repeat(size)}"}`;
}

/** One fuzz request for `op`, mutated as `kind` says. */
export function fuzzRequest(op: Operation, kind: FuzzKind, ctx: FuzzContext): FuzzRequest {
  const { random } = ctx;
  const schema = bodySchema(op);
  const base = {
    kind,
    operation: `${op.method} ${op.template}`,
    method: op.method,
    path: withQuery(fillPath(op, random), plausibleQuery(op, random)),
    headers: { authorization: `Bearer ${ctx.token}` } as Record<string, string>,
  };
  const json = (value: unknown) => ({ ...base, headers: { ...base.headers, ...JSON_HEADERS }, body: toJson(value) });
  switch (kind) {
    case "plausible":
      return schema ? json(plausibleValue(schema, random)) : base;
    case "wrong_type": {
      if (schema) return json(replaceOne(op, random, wrongValue(schema, random)));
      const query = (op.spec.parameters ?? []).find((p) => p.in === "query");
      return query ? { ...base, path: withQuery(fillPath(op, random), [`${query.name}=%5B%5D%7B`]) } : base;
    }
    case "huge_number": {
      const huge = random.pick(HUGE_NUMBERS);
      if (schema) return json(replaceOne(op, random, huge));
      const names = (op.spec.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name);
      const name = names.length > 0 ? random.pick(names) : "limit";
      return { ...base, path: withQuery(fillPath(op, random), [`${name}=${encodeURIComponent(toJson(huge))}`]) };
    }
    case "deep": {
      // Deep enough to overflow a recursive writer, small enough to stay under the body limit.
      const depth = Math.min(random.pick(DEPTHS), Math.floor(ctx.maxBodyBytes / 8));
      return json(replaceOne(op, random, deepJson(depth, random)));
    }
    case "wide": {
      // Thousands of keys or items: work per key that grows with the body (quadratic) stalls on these.
      const count = Math.min(random.pick(WIDTHS), Math.floor(ctx.maxBodyBytes / 16));
      const keys = Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, i]));
      if (random.chance(0.7)) return json({ ...asObject(schema ? plausibleValue(schema, random) : {}), ...keys });
      return json(replaceOne(op, random, random.chance(0.5) ? keys : Object.values(keys)));
    }
    case "malformed":
      return { ...base, headers: { ...base.headers, ...JSON_HEADERS }, body: random.pick(MALFORMED) };
    case "over_limit":
      return {
        ...base,
        headers: { ...base.headers, ...JSON_HEADERS },
        body: overLimitBody(ctx.maxBodyBytes, random),
        chunked: random.chance(0.5),
      };
    case "content_type": {
      const type = random.pick(CONTENT_TYPES);
      const body = type.includes("yaml")
        ? random.pick(YAML_BODIES)
        : toJson(schema ? plausibleValue(schema, random) : {});
      return { ...base, headers: { ...base.headers, "content-type": type }, body };
    }
    case "odd_path":
      return { ...base, path: withQuery(fillPath(op, random, random.pick(ODD_SEGMENTS)), plausibleQuery(op, random)) };
    case "many_params": {
      const names = (op.spec.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name);
      const repeated = names.length > 0 && random.chance(0.5) ? random.pick(names) : undefined;
      // Short names, so most of these fit in Node's 16 KiB header limit and reach the router.
      const pairs = Array.from({ length: 3000 }, (_, i) => `${repeated ?? i.toString(36)}=`);
      return { ...base, path: withQuery(fillPath(op, random), pairs) };
    }
    case "method": {
      const method = random.pick(METHODS.filter((m) => m !== op.method));
      return schema && random.chance(0.5) ? { ...json(plausibleValue(schema, random)), method } : { ...base, method };
    }
    case "no_auth": {
      const authorization = random.pick(["", "Bearer ", `Bearer ${ctx.token}x`, `Basic ${ctx.token}`, "Bearer nope"]);
      const headers: Record<string, string> = authorization ? { authorization } : {};
      return schema
        ? { ...base, headers: { ...headers, ...JSON_HEADERS }, body: toJson(plausibleValue(schema, random)) }
        : { ...base, headers };
    }
    case "prototype": {
      const body = asObject(schema ? plausibleValue(schema, random) : {});
      const poison = random.pick(['"__proto__":{"polluted":1}', '"constructor":{"prototype":{"polluted":1}}']);
      const rest = toJson(body).slice(1);
      return json(new RawJson(`{${poison}${rest === "}" ? "}" : `,${rest}`}`));
    }
  }
}

/**
 * `count` requests: the operations in turn, the mutation kind shifting by one each round, so every operation
 * meets every kind once per FUZZ_KINDS.length rounds; the PRNG picks the values within a kind.
 */
export function* fuzzRequests(doc: OpenApiDocument, count: number, ctx: FuzzContext): Generator<FuzzRequest> {
  const operations = operationsOf(doc);
  for (let i = 0; i < count; i++) {
    const index = i % operations.length;
    const round = Math.floor(i / operations.length);
    yield fuzzRequest(operations[index]!, FUZZ_KINDS[(index + round) % FUZZ_KINDS.length]!, ctx);
  }
}
