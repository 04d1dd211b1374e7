import type { AssistantClient } from "@assistant/client";
import { AppError, ERROR_CODES, type ErrorCode } from "../util/errors.ts";
import type { CliContext } from "./context.ts";
import { requestErrorSentence } from "./requestWording.ts";

// Commands that need the running daemon (chat, tasks, router metrics, doctor --advice...) call it through here
// with the typed client's methods, so each says the same thing when it is not running and reads the answers as
// the API declares them.

/** A client of the running daemon; `provider_unavailable` naming `what` when no daemon runs. */
export async function connectDaemon(ctx: CliContext, what: string): Promise<AssistantClient> {
  const [{ AssistantClient }, { processAlive, readDaemonInfo }, { readAuthToken }, { urlFor }] = await Promise.all([
    import("@assistant/client"),
    import("../runtime/daemonInfo.ts"),
    import("../auth/authToken.ts"),
    import("../daemon/control.ts"),
  ]);
  const info = readDaemonInfo(ctx.paths.daemonInfo);
  if (!info || !processAlive(info.pid)) throw notRunning(what);
  return new AssistantClient({ baseUrl: urlFor(info.bind, info.port), token: readAuthToken(ctx.paths.authToken) });
}

export function notRunning(what: string): AppError {
  return new AppError(
    "provider_unavailable",
    `the daemon is not running, so ${what}; start it with \`assistant start\` (or \`assistant up\`)`,
  );
}

/**
 * A value as the user typed it, sent on unchecked where the API wants a number or one of a few words: the
 * daemon's validation words the error (`query.limit: ...`), the same for the CLI as for any client.
 */
export function asTyped<T>(typed: string): T {
  return typed as unknown as T;
}

/** Runs a daemon call; "unreachable" (it died meanwhile) gets the same message as "not running". */
export async function withDaemon<T>(what: string, call: () => Promise<T>): Promise<T> {
  const { ApiError } = await import("@assistant/client");
  try {
    return await call();
  } catch (error) {
    if (error instanceof ApiError && error.code === "unreachable") throw notRunning(what);
    if (error instanceof ApiError) {
      const message = error.code === "invalid_request" ? requestErrorSentence(error.message) : error.message;
      throw new AppError(toCode(error.code), message, error.details);
    }
    throw error;
  }
}

/** One call to the running daemon through the typed client, with the not-running and error handling above. */
export async function callDaemon<T>(
  ctx: CliContext,
  what: string,
  call: (client: AssistantClient) => Promise<T>,
): Promise<T> {
  const client = await connectDaemon(ctx, what);
  return withDaemon(what, () => call(client));
}

/** The daemon's codes pass through; anything else (a newer daemon's code) is `internal`. */
const KNOWN: ReadonlySet<string> = new Set(ERROR_CODES);
const toCode = (code: string): ErrorCode => (KNOWN.has(code) ? (code as ErrorCode) : "internal");
