import { APICallError } from "@ai-sdk/provider";
import { ProviderFailure } from "./errors.ts";

// Turns whatever a provider threw (AI SDK APICallError, fetch/network errors, our own ProviderFailure) into a
// ProviderFailure the router can act on. Messages are short and never include request bodies or headers.

/** Connection failures, with what they mean for a person who has to fix them. */
const UNREACHABLE: Record<string, string> = {
  ECONNREFUSED: "nothing listens there",
  ENOTFOUND: "the host name does not resolve",
  EAI_AGAIN: "the DNS lookup failed; offline?",
  EHOSTUNREACH: "no route to the host; offline?",
  ENETUNREACH: "the network is unreachable; offline?",
  ECONNRESET: "the connection was reset",
  ETIMEDOUT: "the connection timed out",
};
const MAX_RETRY_AFTER_MS = 5 * 60_000;

/** Retry-After in seconds or as an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.min(Number(trimmed) * 1000, MAX_RETRY_AFTER_MS);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.min(Math.max(0, date - now), MAX_RETRY_AFTER_MS);
}

function errorCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string") return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function shortMessage(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split("\n")[0]!.slice(0, 300);
}

/** Host and port only: a URL may carry a user name, a password or a key in its query. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "the server";
  }
}

export function toProviderFailure(error: unknown): ProviderFailure {
  if (error instanceof ProviderFailure) return error;
  if (APICallError.isInstance(error)) {
    const status = error.statusCode;
    const headers = error.responseHeaders ?? {};
    const detail = `HTTP ${status ?? "error"}: ${shortMessage(error)}`;
    if (status === 429) {
      return new ProviderFailure("rate_limited", detail, {
        status,
        retryAfterMs: parseRetryAfter(headers["retry-after"] ?? headers["Retry-After"]),
      });
    }
    if (status === 408) return new ProviderFailure("timeout", detail, { status });
    if (status !== undefined && status >= 500) {
      return new ProviderFailure("server", detail, { status, retryAfterMs: parseRetryAfter(headers["retry-after"]) });
    }
    // The OpenAI library reports a connection cut mid-response as statusCode 200 (the status it had received).
    if (status !== undefined && status < 400)
      return new ProviderFailure("server", `connection cut: ${shortMessage(error)}`);
    if (status !== undefined) return new ProviderFailure("refused", detail, { status });
    // No answer at all: the AI SDK reports a failed connection this way (nothing listens, blocked port...).
    if (error.message.startsWith("Cannot connect to API")) {
      const code = errorCode(error.cause);
      const why = code ? ` (${code}${UNREACHABLE[code] ? `: ${UNREACHABLE[code]}` : ""})` : "";
      return new ProviderFailure("unavailable", `cannot connect to ${hostOf(error.url)}${why}`);
    }
  }
  const code = errorCode(error);
  if (code && UNREACHABLE[code])
    return new ProviderFailure("unavailable", `cannot connect (${code}: ${UNREACHABLE[code]})`);
  return new ProviderFailure("server", shortMessage(error));
}
