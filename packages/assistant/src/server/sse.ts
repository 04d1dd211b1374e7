import type { FastifyReply, FastifyRequest } from "fastify";
import type { EventLog } from "../events/eventLog.ts";
import type { EventKind, StoredEvent } from "../events/registry.ts";

const KEEPALIVE_MS = 15_000;
const BACKLOG_PAGE = 500;

export interface StreamFilter {
  kinds?: EventKind[];
  taskId?: string;
}

/** Open SSE responses, so shutdown can end them instead of waiting on them forever. */
export const openStreams = new Set<FastifyReply>();

function frame(event: StoredEvent): string {
  return `id: ${event.id}\nevent: ${event.kind}\ndata: ${JSON.stringify(event)}\n\n`;
}

function matches(event: StoredEvent, filter: StreamFilter): boolean {
  if (filter.kinds && filter.kinds.length > 0 && !filter.kinds.includes(event.kind)) return false;
  if (filter.taskId && event.task_id !== filter.taskId) return false;
  return true;
}

/**
 * Streams stored events (docs/http-api.md#events): first what the client missed after `Last-Event-ID`, then live ones.
 * Live events that arrive while the backlog is sent are buffered and de-duplicated by sequence number.
 */
export function streamEvents(
  log: EventLog,
  request: FastifyRequest,
  reply: FastifyReply,
  filter: StreamFilter,
  afterSeq: number,
): void {
  reply.hijack();
  const out = reply.raw;
  out.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache, no-transform",
    connection: "keep-alive",
    "x-accel-buffering": "no",
  });
  if (request.method === "HEAD") {
    out.end(); // HEAD gets the headers only; a stream would hold the connection with nothing to send
    return;
  }
  openStreams.add(reply);

  let lastSent = afterSeq;
  let pending: StoredEvent[] | null = [];
  const send = (event: StoredEvent) => {
    const seq = Number(event.id);
    if (seq <= lastSent || !matches(event, filter)) return;
    out.write(frame(event));
    lastSent = seq;
  };
  const unsubscribe = log.subscribe((event) => (pending ? pending.push(event) : send(event)));

  out.write(": connected\n\n");
  for (;;) {
    const batch = log.list({ afterSeq: lastSent, limit: BACKLOG_PAGE, ...filter });
    for (const event of batch) send(event);
    if (batch.length < BACKLOG_PAGE) break;
    lastSent = Number(batch.at(-1)!.id); // filtered-out tails still advance the scan
  }
  for (const event of pending) send(event);
  pending = null;

  const keepalive = setInterval(() => out.write(": keepalive\n\n"), KEEPALIVE_MS);
  const close = () => {
    clearInterval(keepalive);
    unsubscribe();
    openStreams.delete(reply);
  };
  request.raw.on("close", close);
  out.on("close", close);
}

/** `Last-Event-ID` header, or the `last_event_id` query parameter for clients that cannot set headers. */
export function resumePoint(header: string | string[] | undefined, query: number | undefined): number {
  const raw = Array.isArray(header) ? header[0] : header;
  const fromHeader = raw !== undefined && /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : undefined;
  return fromHeader ?? query ?? 0;
}
