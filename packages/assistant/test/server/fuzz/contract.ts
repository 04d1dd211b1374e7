import type { FuzzRequest } from "./cases.ts";
import type { FuzzOutcome } from "./send.ts";

// The HTTP error contract (docs/http-api.md, "Errors") as the fuzzer checks it: an answer for every request (no
// reset, no stall), no 5xx, bodies over the limit or too deep refused, and every other non-2xx answer is exactly
// {"error":{"code","message","details"?}}.
// The browser login page (/login) answers HTML and redirects, as browsers expect. The one 5xx allowed is the
// documented answer for a model provider that failed (502/503/504 with a provider_* code): the fuzz daemon has
// no embedded model file, so calibrating it is a 503 provider_unavailable, not a daemon fault.

const PROVIDER_FAILURES: Record<number, string> = {
  502: "provider_error",
  503: "provider_unavailable",
  504: "provider_timeout",
};

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Why `body` is not the error shape, or undefined when it is. */
export function errorShapeProblem(body: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return "the body is not JSON";
  }
  if (!isObject(parsed) || Object.keys(parsed).join() !== "error") return "the body has keys other than error";
  const error = parsed.error;
  if (!isObject(error)) return "error is not an object";
  const extra = Object.keys(error).filter((key) => !["code", "message", "details"].includes(key));
  if (extra.length > 0) return `error has other keys: ${extra.join(", ")}`;
  if (typeof error.code !== "string" || !/^[a-z_]+$/.test(error.code)) return "error.code is not a code";
  if (typeof error.message !== "string" || error.message === "") return "error.message is not a message";
  if (error.details !== undefined && !isObject(error.details)) return "error.details is not an object";
  return undefined;
}

// Fastify reads the bodies of these methods; GET and HEAD bodies are ignored, unless their Content-Length
// announces more than the limit.
const BODY_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** A body over the limit (413) or nested too deep (400) must never reach a handler. */
function mustBeRefused(fuzz: FuzzRequest): boolean {
  if (fuzz.kind === "over_limit") return BODY_METHODS.has(fuzz.method) || !fuzz.chunked;
  return fuzz.kind === "deep" && BODY_METHODS.has(fuzz.method);
}

function isProviderFailure(status: number, body: string): boolean {
  try {
    return errorShapeProblem(body) === undefined && JSON.parse(body).error.code === PROVIDER_FAILURES[status];
  } catch {
    return false;
  }
}

/** What breaks the contract in this exchange, or undefined. */
export function contractViolation(fuzz: FuzzRequest, outcome: FuzzOutcome): string | undefined {
  const what = `${fuzz.kind}: ${fuzz.method} ${fuzz.path.slice(0, 100)} (${fuzz.operation})`;
  if (outcome.error !== undefined) return `${what}: no answer (${outcome.error})`;
  const { status, contentType, body } = outcome.answer;
  if (status >= 500 && !isProviderFailure(status, body)) return `${what}: ${status} ${body.slice(0, 300)}`;
  if (status < 300 && mustBeRefused(fuzz)) return `${what}: ${status}: the body should have been refused`;
  if (status < 300 || fuzz.method === "HEAD") return undefined;
  if (fuzz.path.startsWith("/login") && fuzz.operation === "GET /login") return undefined;
  if (!contentType.startsWith("application/json")) return `${what}: ${status} answered ${contentType || "no type"}`;
  const problem = errorShapeProblem(body);
  return problem ? `${what}: ${status} ${problem}: ${body.slice(0, 300)}` : undefined;
}
