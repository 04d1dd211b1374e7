/** What to tell the person about a failed call: the daemon's own message (an ApiError's), never a credential. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
