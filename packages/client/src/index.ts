// Typed HTTP client of the assistant daemon's API (docs/http-api.md). Shared by the CLI, the TUI, the web UI
// and the Studio; it depends on nothing but the platform's fetch.

export interface ApiErrorBody {
  error: { code: string; message: string; details?: Record<string, unknown> };
}

/** An error answered by the daemon (its code and message), or `unreachable` when no daemon answered. */
export class ApiError extends Error {
  readonly code: string;
  readonly status: number;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: string, message: string, status: number, details?: Record<string, unknown>) {
    super(message);
    this.name = "ApiError";
    this.code = code;
    this.status = status;
    this.details = details;
  }
}

export interface Health {
  status: "ok";
  version: string;
}

export interface Status extends Health {
  pid: number;
  uptime_secs: number;
  started_at: string;
  data_dir: string;
  listen: { bind: string; port: number };
  node: string;
  memory_rss_bytes: number;
  counts: Record<string, number>;
}

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

export interface DaemonEvent {
  id: string;
  kind: string;
  ts: string;
  task_id?: string;
  session_id?: string;
  data: Record<string, unknown>;
}

export interface LoginCode {
  code: string;
  url: string;
  expires_in: number;
}

/** One health check of `GET /api/doctor` (same shape as `assistant doctor --json`). */
export interface DoctorCheck {
  id: string;
  title: string;
  status: "ok" | "warn" | "fail";
  detail: string;
  /** What to run to fix it, when it is not ok. */
  fix?: string;
  /** Whether `assistant doctor --fix` repairs it. */
  fixable: boolean;
}

export interface DoctorReport {
  checks: DoctorCheck[];
  advice: string[];
}

export interface MessageRequest {
  message: string;
  session_id?: string;
  task_type?: string;
}

/** `POST /api/message` with `wait: true`. */
export interface ChatReply {
  task_id: string | null;
  session_id: string;
  task_type: string;
  reply: string;
  provider: string;
  model: string;
  usage: { input: number; output: number };
  cost_usd: number;
}

/** One server-sent event of `POST /api/message` with `stream: true` (start, route, token, reset, tool_call, done, error). */
export interface ChatStreamEvent {
  event: string;
  data: Record<string, unknown>;
}

export interface ClientOptions {
  baseUrl: string;
  token?: string;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

export class AssistantClient {
  readonly baseUrl: string;
  readonly #token: string | undefined;
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;

  constructor(options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.#token = options.token;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#fetch = options.fetch ?? fetch;
  }

  /** Sends a request and decodes the JSON answer; errors become ApiError with the daemon's code. */
  async request<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (this.#token) headers.authorization = `Bearer ${this.#token}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    let response: Response;
    try {
      response = await this.#fetch(`${this.baseUrl}${path}`, {
        method,
        headers,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: signal ?? AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (error) {
      const reason = (error as Error).name === "TimeoutError" ? "timed out" : "is not reachable";
      throw new ApiError("unreachable", `the daemon at ${this.baseUrl} ${reason}`, 0);
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text === "" ? undefined : JSON.parse(text);
    } catch {
      throw new ApiError(
        "bad_response",
        `the daemon answered ${response.status} with a body that is not JSON`,
        response.status,
      );
    }
    if (!response.ok) {
      const err = (parsed as ApiErrorBody | undefined)?.error;
      throw new ApiError(
        err?.code ?? "http_error",
        err?.message ?? `HTTP ${response.status}`,
        response.status,
        err?.details,
      );
    }
    return parsed as T;
  }

  health(timeoutMs?: number): Promise<Health> {
    return this.request("GET", "/api/health", undefined, timeoutMs ? AbortSignal.timeout(timeoutMs) : undefined);
  }

  status(): Promise<Status> {
    return this.request("GET", "/api/status");
  }

  vaultList(limit?: number, cursor?: string): Promise<Page<{ key: string }>> {
    const query = new URLSearchParams();
    if (limit) query.set("limit", String(limit));
    if (cursor) query.set("cursor", cursor);
    const qs = query.toString();
    return this.request("GET", `/api/vault${qs ? `?${qs}` : ""}`);
  }

  vaultSet(key: string, value: string): Promise<{ key: string }> {
    return this.request("PUT", "/api/vault", { key, value });
  }

  vaultDelete(key: string): Promise<{ key: string; deleted: true }> {
    return this.request("DELETE", "/api/vault", { key });
  }

  /** Health checks and advice computed by the running daemon. */
  doctor(): Promise<DoctorReport> {
    return this.request("GET", "/api/doctor");
  }

  loginCode(): Promise<LoginCode> {
    return this.request("POST", "/api/auth/login-code");
  }

  /** Sends a chat message and waits for the whole reply (no client timeout unless `signal` sets one). */
  sendMessage(body: MessageRequest, signal?: AbortSignal): Promise<ChatReply> {
    return this.request("POST", "/api/message", { ...body, wait: true }, signal ?? new AbortController().signal);
  }

  /** Sends a chat message and yields the reply's events as they come. */
  async *streamMessage(body: MessageRequest, signal?: AbortSignal): AsyncGenerator<ChatStreamEvent> {
    const response = await this.#open("/api/message", { method: "POST", body: { ...body, stream: true }, signal });
    for await (const frame of parseSseFrames(response)) {
      yield { event: frame.event, data: JSON.parse(frame.data) as Record<string, unknown> };
    }
  }

  /** Opens a streaming response; a non-2xx answer becomes ApiError with the daemon's code. */
  async #open(
    path: string,
    options: { method?: string; body?: unknown; headers?: Record<string, string>; signal?: AbortSignal | undefined },
  ): Promise<ReadableStream<Uint8Array>> {
    const headers: Record<string, string> = { accept: "text/event-stream", ...options.headers };
    if (this.#token) headers.authorization = `Bearer ${this.#token}`;
    if (options.body !== undefined) headers["content-type"] = "application/json";
    const init: RequestInit = { method: options.method ?? "GET", headers };
    if (options.body !== undefined) init.body = JSON.stringify(options.body);
    if (options.signal) init.signal = options.signal;
    let response: Response;
    try {
      response = await this.#fetch(`${this.baseUrl}${path}`, init);
    } catch (error) {
      if ((error as Error).name === "AbortError") throw error;
      throw new ApiError("unreachable", `the daemon at ${this.baseUrl} is not reachable`, 0);
    }
    if (!response.ok || !response.body) {
      const body = (await response.json().catch(() => undefined)) as ApiErrorBody | undefined;
      throw new ApiError(
        body?.error.code ?? "http_error",
        body?.error.message ?? `HTTP ${response.status}`,
        response.status,
        body?.error.details,
      );
    }
    return response.body;
  }

  /**
   * Follows the server-sent event stream, resuming after `lastEventId`; yields events until `signal` aborts.
   */
  async *events(
    options: { lastEventId?: string; kinds?: string[]; signal?: AbortSignal } = {},
  ): AsyncGenerator<DaemonEvent> {
    const qs = options.kinds?.length ? `?kinds=${encodeURIComponent(options.kinds.join(","))}` : "";
    const body = await this.#open(`/api/events${qs}`, {
      headers: options.lastEventId ? { "last-event-id": options.lastEventId } : {},
      signal: options.signal,
    });
    yield* parseEventStream(body);
  }
}

/** Decodes an SSE byte stream into frames; comments and keep-alives are skipped. */
export async function* parseSseFrames(
  body: ReadableStream<Uint8Array>,
): AsyncGenerator<{ event: string; data: string; id?: string }> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end = buffer.indexOf("\n\n");
    while (end >= 0) {
      const lines = buffer.slice(0, end).split("\n");
      buffer = buffer.slice(end + 2);
      const field = (name: string) =>
        lines
          .find((line) => line.startsWith(`${name}:`))
          ?.slice(name.length + 1)
          .trim();
      const data = lines
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).trimStart())
        .join("\n");
      const id = field("id");
      if (data) yield { event: field("event") ?? "message", data, ...(id !== undefined ? { id } : {}) };
      end = buffer.indexOf("\n\n");
    }
  }
}

/** Decodes the daemon's event stream (`GET /api/events`). */
export async function* parseEventStream(body: ReadableStream<Uint8Array>): AsyncGenerator<DaemonEvent> {
  for await (const frame of parseSseFrames(body)) yield JSON.parse(frame.data) as DaemonEvent;
}
