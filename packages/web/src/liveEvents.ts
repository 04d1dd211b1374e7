import type { StoredEvent } from "@assistant/client";
import { useEffect, useRef } from "react";
import { client } from "./api.ts";

// Live data from the daemon's event stream (`GET /api/events`, server-sent events read with fetch by the client):
// one connection for the whole page, opened by the first listener and closed with the last. It starts after the
// newest stored event (the status's `counts.events` is the latest sequence number), and the client reconnects
// after a drop with Last-Event-ID, so nothing is missed or replayed twice. Views reload what an event concerns;
// they keep a slow poll in case the stream is down.

type Listener = (event: StoredEvent) => void;

const listeners = new Set<Listener>();
let connection: AbortController | undefined;

function connect(): void {
  const abort = new AbortController();
  connection = abort;
  void (async () => {
    try {
      const status = await client.getStatus({ signal: abort.signal });
      for await (const event of client.events({ lastEventId: String(status.counts.events), signal: abort.signal })) {
        for (const listener of listeners) listener(event);
      }
    } catch {
      // The daemon refused or was not reachable: the views' slow poll goes on; the next listener tries again.
    }
    if (connection === abort) connection = undefined;
  })();
}

function subscribe(listener: Listener): () => void {
  listeners.add(listener);
  if (!connection) connect();
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0) {
      connection?.abort();
      connection = undefined;
    }
  };
}

/** Calls `onEvent` for each new event whose kind is in `kinds` (and that passes `match`), while `active`. */
export function useLiveEvents(
  kinds: readonly StoredEvent["kind"][],
  onEvent: (event: StoredEvent) => void,
  active = true,
): void {
  const latest = useRef(onEvent);
  latest.current = onEvent;
  const key = kinds.join(",");
  useEffect(() => {
    if (!active) return;
    const wanted = new Set(key.split(","));
    return subscribe((event) => {
      if (wanted.has(event.kind)) latest.current(event);
    });
  }, [key, active]);
}

/** The task events that change what a task list or a task's detail shows. */
export const TASK_EVENT_KINDS = [
  "task_created",
  "task_state_changed",
  "approval_requested",
  "approval_resolved",
  "tool_call_completed",
  "user_steering_queued",
  "user_steering_applied",
  "user_follow_up_queued",
  "user_follow_up_applied",
] as const satisfies readonly StoredEvent["kind"][];
