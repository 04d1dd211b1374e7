// The contract between the generated operations (generated/operations.ts) and the client's transport (client.ts).

/** Per-call options, accepted by every operation. */
export interface CallOptions {
  /** Aborts the call (or ends the stream). */
  signal?: AbortSignal;
  /** This call's timeout instead of the client's; 0 waits as long as it takes. */
  timeoutMs?: number;
  /** Extra request headers, e.g. `x-assistant-session` for `/v1/chat/completions`. */
  headers?: Record<string, string>;
}

/** One call as a generated method hands it to the transport. */
export interface OperationRequest {
  operationId: string;
  method: "GET" | "PUT" | "POST" | "DELETE" | "PATCH";
  /** The path with its parameters filled in and encoded. */
  path: string;
  /** Query parameters; undefined ones are left out. */
  query?: object | undefined;
  /** The JSON body, or a string sent as `textBodyType`. */
  body?: unknown;
  /** The other media type the body may have (YAML for the mission); used when `body` is a string. */
  textBodyType?: string;
  /** How the success answer is read: JSON, text, bytes (a Blob: the data export), nothing (a redirect), or events. */
  answer: "json" | "text" | "blob" | "none" | "events";
  options?: CallOptions | undefined;
}

/** The answer of an operation without a body (the login redirect): its status and headers. */
export interface NoContent {
  status: number;
  headers: Headers;
}
