import type { ErrorBody } from "./generated/schemas.ts";

/** A code of the daemon's error body, or one of the client's own (`unreachable`, `bad_response`, `http_error`). */
export type ApiErrorCode = ErrorBody["error"]["code"] | "unreachable" | "bad_response" | "http_error";

/**
 * A failed call: the daemon's error body as it was sent (`code`, `message`, `details`) with the HTTP `status`;
 * `unreachable` (status 0) when no daemon answered or the call timed out; `bad_response` when a success answer
 * is not what the operation declares; `http_error` when an error answer is not the daemon's error body.
 */
export class ApiError extends Error {
  readonly code: ApiErrorCode;
  readonly status: number;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ApiErrorCode, message: string, status: number, details?: Record<string, unknown>) {
    super(message);
    this.name = "ApiError";
    this.code = code;
    this.status = status;
    this.details = details;
  }
}

/** The ApiError of an error answer, from its body when it has the daemon's error shape. */
export function errorFromBody(status: number, body: unknown): ApiError {
  const error = (body as Partial<ErrorBody> | undefined)?.error;
  if (error && typeof error.code === "string" && typeof error.message === "string") {
    return new ApiError(error.code, error.message, status, error.details);
  }
  return new ApiError("http_error", `HTTP ${status}`, status);
}
