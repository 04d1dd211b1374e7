import { AppError } from "../util/errors.ts";

// What may be stored. Names are shown in listings and used in `vault://<name>` refs, so they stay plain;
// values may be anything printable or not (multi-line tokens, PEM keys) up to a size that fits a request body.

export const NAME_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;
export const MAX_VALUE_BYTES = 64 * 1024;

export function isValidName(name: string): boolean {
  return NAME_PATTERN.test(name);
}

export function assertValidName(name: string): void {
  if (typeof name !== "string" || !isValidName(name)) {
    // A name is not secret, but an invalid one may be a pasted value, so it is not echoed.
    throw new AppError(
      "invalid_request",
      "invalid vault key name: use 1 to 128 characters among letters, digits, '_', '.' and '-'",
      { field: "key" },
    );
  }
}

export function assertValidValue(value: string): void {
  if (typeof value !== "string" || value.length === 0) {
    throw new AppError("invalid_request", "the secret value is empty", { field: "value" });
  }
  const bytes = Buffer.byteLength(value, "utf8");
  if (bytes > MAX_VALUE_BYTES) {
    throw new AppError("invalid_request", `the secret value is ${bytes} bytes; the limit is ${MAX_VALUE_BYTES} bytes`, {
      field: "value",
    });
  }
}
