import { ApiError, errorFromBody } from "./apiError.ts";
import { Operations } from "./generated/operations.ts";
import type { StoredEvent } from "./generated/schemas.ts";
import type { OperationRequest } from "./operation.ts";
import { parseSseMessages } from "./sse.ts";

// The transport of the generated operations (one method per operation of the daemon's API, generated/): fetch,
// authentication, timeouts and errors; and the event stream that survives a dropped connection.

const SESSION_COOKIE = "assistant_session";
const DEFAULT_TIMEOUT_MS = 30_000;
const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 10_000;

export interface ClientOptions {
  baseUrl: string;
  /** The API token (the data directory's `auth_token`), sent as `Authorization: Bearer`. */
  token?: string;
  /**
   * The `assistant_session` cookie value (see `sessionCookieOf`), for a program without a browser's cookie store;
   * a page the daemon serves needs neither: the browser sends the cookie itself.
   */
  session?: string;
  /** How long a call may take, 30 s by default; a call that waits for a task (`wait: true`) and streams have none. */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

export interface EventStreamOptions {
  /** Resume after this event id: every event after it is replayed, then live ones. */
  lastEventId?: string;
  /** Only these kinds (`task_created`, `vault_updated`...). */
  kinds?: string[];
  /** Ends the stream. */
  signal?: AbortSignal;
  /** Reconnect after a dropped connection, resuming after the last event received (default true). */
  reconnect?: boolean;
  /** The first wait before reconnecting, doubled after each failed attempt up to 10 s (default 500 ms). */
  retryMs?: number;
}

export class AssistantClient extends Operations {
  readonly baseUrl: string;
  readonly #token: string | undefined;
  readonly #session: string | undefined;
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;

  constructor(options: ClientOptions) {
    super();
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.#token = options.token;
    this.#session = options.session;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    // Called as a method of this client, the browser's own fetch throws "Illegal invocation": bind it to its global.
    this.#fetch = options.fetch ?? fetch.bind(globalThis);
  }

  /**
   * Follows `GET /api/events`: the events after `lastEventId`, then live ones, until `signal` aborts. When the
   * connection drops (the network, a daemon restart) it reconnects with `Last-Event-ID` set to the last event it
   * yielded, so no event is lost or repeated. A daemon that refuses the stream (a bad kind, a wrong token) or is
   * not reachable at the first attempt is an ApiError.
   */
  async *events(options: EventStreamOptions = {}): AsyncGenerator<StoredEvent> {
    const { signal, reconnect = true } = options;
    const query = options.kinds?.length ? { kinds: options.kinds.join(",") } : undefined;
    let lastEventId = options.lastEventId;
    let connected = false;
    let delay = options.retryMs ?? FIRST_RETRY_MS;
    for (;;) {
      try {
        const headers: Record<string, string> = lastEventId ? { "last-event-id": lastEventId } : {};
        const response = await this.#answer(
          { operationId: "streamEvents", method: "GET", path: "/api/events", query, answer: "events" },
          { signal, timeoutMs: 0, headers },
        );
        connected = true;
        delay = options.retryMs ?? FIRST_RETRY_MS;
        for await (const message of parseSseMessages(response.body!)) {
          const event = message.data as StoredEvent;
          lastEventId = message.id ?? event.id;
          yield event;
        }
        if (!reconnect) return;
      } catch (error) {
        if (signal?.aborted) return;
        const refused = error instanceof ApiError && error.status > 0;
        if (refused || !reconnect || !connected) throw dropped(error, this.baseUrl);
      }
      await sleep(delay, signal);
      if (signal?.aborted) return;
      delay = Math.min(delay * 2, MAX_RETRY_MS);
    }
  }

  protected async send<T>(request: OperationRequest): Promise<T> {
    const response = await this.#answer(request, request.options);
    if (request.answer === "none") {
      await response.body?.cancel(); // a redirect's body is not read: release the connection
      return { status: response.status, headers: response.headers } as T;
    }
    if (request.answer === "blob") {
      try {
        return (await response.blob()) as T;
      } catch (error) {
        throw this.#failure(error, request.options?.signal);
      }
    }
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      throw this.#failure(error, request.options?.signal);
    }
    if (request.answer === "text") return text as T;
    try {
      return (text === "" ? undefined : JSON.parse(text)) as T;
    } catch {
      throw new ApiError(
        "bad_response",
        `the daemon answered ${response.status} with a body that is not JSON`,
        response.status,
      );
    }
  }

  protected async *open<T>(request: OperationRequest): AsyncGenerator<T> {
    const response = await this.#answer(request, { ...request.options, timeoutMs: request.options?.timeoutMs ?? 0 });
    try {
      for await (const message of parseSseMessages(response.body!)) yield message as T;
    } catch (error) {
      throw this.#failure(error, request.options?.signal);
    }
  }

  /** Sends the request; an error answer becomes ApiError, a failed connection `unreachable`. */
  async #answer(request: OperationRequest, options: OperationRequest["options"]): Promise<Response> {
    const accept =
      request.answer === "events" ? "text/event-stream" : request.answer === "blob" ? "*/*" : "application/json";
    const headers: Record<string, string> = { accept, ...this.#credentials(), ...options?.headers };
    const init: RequestInit = { method: request.method, headers };
    if (request.body !== undefined) {
      const text = typeof request.body === "string" && request.textBodyType !== undefined;
      headers["content-type"] = text ? request.textBodyType! : "application/json";
      init.body = text ? (request.body as string) : JSON.stringify(request.body);
    }
    // A redirect is the answer itself (the login's Set-Cookie), not a page to follow.
    if (request.answer === "none") init.redirect = "manual";
    // A stream, a call waiting for its task and a download (as long as the archive is) have no timeout.
    const waits =
      request.answer === "events" ||
      request.answer === "blob" ||
      (request.body as { wait?: unknown } | undefined)?.wait === true;
    const timeoutMs = options?.timeoutMs ?? (waits ? 0 : this.#timeoutMs);
    const signals = [options?.signal, timeoutMs > 0 ? AbortSignal.timeout(timeoutMs) : undefined].filter(
      (signal) => signal !== undefined,
    );
    if (signals.length > 0) init.signal = signals.length === 1 ? signals[0]! : AbortSignal.any(signals);
    let response: Response;
    try {
      response = await this.#fetch(`${this.baseUrl}${request.path}${queryString(request.query)}`, init);
    } catch (error) {
      throw this.#failure(error, options?.signal);
    }
    const redirect = request.answer === "none" && response.status >= 300 && response.status < 400;
    if (!response.ok && !redirect) {
      const text = await response.text().catch(() => "");
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      throw errorFromBody(response.status, body);
    }
    if (request.answer === "events" && !response.body) {
      throw new ApiError("bad_response", "the daemon answered without a stream", response.status);
    }
    return response;
  }

  #credentials(): Record<string, string> {
    if (this.#token) return { authorization: `Bearer ${this.#token}` };
    if (this.#session) return { cookie: `${SESSION_COOKIE}=${this.#session}` };
    return {};
  }

  /** A failed fetch or read: the caller's own abort as it is, anything else `unreachable`. */
  #failure(error: unknown, signal: AbortSignal | undefined): unknown {
    if (signal?.aborted || error instanceof ApiError) return error;
    const reason = (error as Error).name === "TimeoutError" ? "timed out" : "is not reachable";
    return new ApiError("unreachable", `the daemon at ${this.baseUrl} ${reason}`, 0);
  }
}

function queryString(query: object | undefined): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null) params.set(name, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : "";
}

/** A stream that ended in error: the daemon's refusal as it is, a lost connection as `unreachable`. */
function dropped(error: unknown, baseUrl: string): unknown {
  if (error instanceof ApiError) return error;
  return new ApiError("unreachable", `the connection to the daemon at ${baseUrl} was lost`, 0);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/** The session cookie a `login` answer sets (readable outside a browser only), for `ClientOptions.session`. */
export function sessionCookieOf(headers: Headers): string | undefined {
  for (const cookie of headers.getSetCookie()) {
    const [pair] = cookie.split(";");
    const eq = pair!.indexOf("=");
    if (pair!.slice(0, eq).trim() === SESSION_COOKIE) return pair!.slice(eq + 1).trim();
  }
  return undefined;
}
