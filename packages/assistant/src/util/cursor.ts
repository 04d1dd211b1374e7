import { AppError } from "./errors.ts";

// The opaque list cursor of docs/http-api.md#lists (`{items, next_cursor}`), shared by the HTTP pagination helpers
// and the services that page SQLite rows themselves. It carries the position after which the next page starts.

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

export function encodeCursor(position: string | number): string {
  return Buffer.from(JSON.stringify({ p: position })).toString("base64url");
}

export function decodeCursor(cursor: string | undefined): string | number | undefined {
  if (cursor === undefined || cursor === "") return undefined;
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { p?: unknown };
    if (typeof value.p === "string" || typeof value.p === "number") return value.p;
  } catch {}
  throw invalidCursor();
}

export function invalidCursor(): AppError {
  return new AppError("invalid_request", "cursor is not valid: pass back the next_cursor of a previous page", {
    field: "cursor",
  });
}

/** Default page size of lists (docs/http-api.md#lists: default 50, max 500). */
export const DEFAULT_PAGE_LIMIT = 50;

/** Stores that page SQLite rows by their seq use the seq as the cursor position. */
export function encodeSeqCursor(seq: number): string {
  return encodeCursor(seq);
}

export function decodeSeqCursor(cursor: string | undefined): number | undefined {
  const position = decodeCursor(cursor);
  if (position === undefined || (typeof position === "number" && Number.isSafeInteger(position))) return position;
  throw invalidCursor();
}
