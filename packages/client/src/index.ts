// Typed HTTP client of the assistant daemon's API (docs/http-api.md "Typed client"). Shared by the CLI, the TUI,
// the web UI and the Studio; it depends on nothing but the platform's fetch. The operations and the records are
// generated from the daemon's OpenAPI document (generated/, `npm run generate:client`).

export { ApiError, type ApiErrorCode } from "./apiError.ts";
export { AssistantClient, type ClientOptions, type EventStreamOptions, sessionCookieOf } from "./client.ts";
export type * from "./generated/operations.ts";
export type * from "./generated/schemas.ts";
export type { CallOptions, NoContent } from "./operation.ts";
export { parseSseFrames, parseSseMessages, type SseFrame, type SseMessage } from "./sse.ts";
