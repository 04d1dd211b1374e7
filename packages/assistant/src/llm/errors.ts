import { AppError } from "../util/errors.ts";
import type { AttemptRecord } from "./types.ts";

// Why a provider call failed, in terms the router acts on: whether to retry, how long to wait, and which HTTP
// error the whole request becomes when every route failed.

export type FailureKind =
  /** Not configured, key missing, model file missing, runtime cannot load: try the next route, never retry. */
  | "unavailable"
  /** Total, first-chunk or idle timeout. Retryable. */
  | "timeout"
  /** 429 from the provider; `retryAfterMs` from Retry-After when given. Retryable. */
  | "rate_limited"
  /** Server error or cut stream. Retryable. */
  | "server"
  /** The request itself was refused (400, 401, 403, 404...). Not retryable; the next route may still work. */
  | "refused"
  /** A route constraint (cost, latency) or the session budget excluded this call. */
  | "constraint";

export class ProviderFailure extends Error {
  readonly kind: FailureKind;
  readonly retryAfterMs: number | undefined;
  readonly status: number | undefined;

  constructor(kind: FailureKind, message: string, options: { retryAfterMs?: number; status?: number } = {}) {
    super(message);
    this.name = "ProviderFailure";
    this.kind = kind;
    this.retryAfterMs = options.retryAfterMs;
    this.status = options.status;
  }

  get retryable(): boolean {
    return this.kind === "timeout" || this.kind === "rate_limited" || this.kind === "server";
  }
}

/** The error a request becomes when no route answered; the message lists each route and why it failed. */
export function routesExhausted(taskType: string, attempts: AttemptRecord[], failures: ProviderFailure[]): AppError {
  const tried = attempts
    .filter((a) => a.outcome !== "ok")
    .map((a) => `${a.provider}/${a.model}: ${a.reason ?? a.outcome}`)
    .join("; ");
  const code =
    failures.length > 0 && failures.every((f) => f.kind === "timeout")
      ? "provider_timeout"
      : failures.some((f) => f.kind === "server" || f.kind === "refused" || f.kind === "rate_limited")
        ? "provider_error"
        : "provider_unavailable";
  return new AppError(code, `no route answered task type "${taskType}": ${tried || "no routes"}`, {
    task_type: taskType,
    attempts,
  });
}
