// One error type for every surface: HTTP maps it to the JSON error shape (docs/http-api.md#errors), the CLI prints
// the message and exits non-zero. Messages are written for a person and never carry secrets.

export const ERROR_CODES = [
  "invalid_request",
  "unauthorized",
  "forbidden",
  "policy_denied",
  "not_found",
  "conflict",
  "payload_too_large",
  "unsupported_media_type",
  "rate_limited",
  "budget_exceeded",
  "internal",
  "provider_error",
  "provider_unavailable",
  "provider_timeout",
  "config_invalid",
  "vault_locked",
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export const ERROR_STATUS: Record<ErrorCode, number> = {
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  policy_denied: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  budget_exceeded: 429, // the session's token or cost budget (ASSISTANT_MAX_*_PER_SESSION) is spent
  internal: 500,
  provider_error: 502,
  provider_unavailable: 503,
  provider_timeout: 504,
  config_invalid: 500,
  vault_locked: 500,
};

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = "AppError";
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.details = details;
  }
}

/** A config file that does not validate: names the file, the key and the reason. */
export class ConfigError extends AppError {
  readonly file: string;
  readonly key: string;
  readonly reason: string;

  constructor(file: string, key: string, reason: string) {
    super("config_invalid", `${file}: ${key ? `${key}: ` : ""}${reason}`, { file, key, reason });
    this.name = "ConfigError";
    this.file = file;
    this.key = key;
    this.reason = reason;
  }
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}
