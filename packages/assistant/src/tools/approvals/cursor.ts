import { decodeCursor, encodeCursor, invalidCursor, type Page } from "../../util/cursor.ts";

// The approval stores page SQLite rows by their seq (newest or oldest first), with the shared cursor format.

export type { Page };

export const DEFAULT_PAGE_LIMIT = 50;

export function encodeSeqCursor(seq: number): string {
  return encodeCursor(seq);
}

export function decodeSeqCursor(cursor: string | undefined): number | undefined {
  const position = decodeCursor(cursor);
  if (position === undefined || (typeof position === "number" && Number.isSafeInteger(position))) return position;
  throw invalidCursor();
}
