// Typed HTTP client of the assistant daemon's API (DESIGN.md sections 4-7). Shared by the CLI, the TUI, the web UI
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

  /**
   * Follows the server-sent event stream, resuming after `lastEventId`; yields events until `signal` aborts.
   */
  async *events(
    options: { lastEventId?: string; kinds?: string[]; signal?: AbortSignal } = {},
  ): AsyncGenerator<DaemonEvent> {
    const headers: Record<string, string> = { accept: "text/event-stream" };
    if (this.#token) headers.authorization = `Bearer ${this.#token}`;
    if (options.lastEventId) headers["last-event-id"] = options.lastEventId;
    const qs = options.kinds?.length ? `?kinds=${encodeURIComponent(options.kinds.join(","))}` : "";
    const init: RequestInit = { headers };
    if (options.signal) init.signal = options.signal;
    const response = await this.#fetch(`${this.baseUrl}/api/events${qs}`, init);
    if (!response.ok || !response.body) {
      const body = (await response.json().catch(() => undefined)) as ApiErrorBody | undefined;
      throw new ApiError(
        body?.error.code ?? "http_error",
        body?.error.message ?? `HTTP ${response.status}`,
        response.status,
      );
    }
    yield* parseEventStream(response.body);
  }
}

/** Decodes an SSE byte stream into the daemon's events (comments and keep-alives are skipped). */
export async function* parseEventStream(body: ReadableStream<Uint8Array>): AsyncGenerator<DaemonEvent> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end = buffer.indexOf("\n\n");
    while (end >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = block
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).trimStart())
        .join("\n");
      if (data) yield JSON.parse(data) as DaemonEvent;
      end = buffer.indexOf("\n\n");
    }
  }
}
