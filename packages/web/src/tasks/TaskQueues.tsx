import type { QueuedMessage } from "@assistant/client";
import { useState } from "react";
import { client } from "../api.ts";
import { useMessages } from "../i18n.ts";
import { TASK_EVENT_KINDS, useLiveEvents } from "../liveEvents.ts";
import { usePolling } from "./usePolling.ts";

// Live from the event stream; the slow poll covers a stream that is down.
const REFRESH_MS = 10_000;

/** The steering and follow-up messages not yet delivered to a task, with a button that drops them all. */
export function TaskQueues({ id, live }: { id: string; live: boolean }) {
  const t = useMessages();
  const queue = usePolling(() => client.getTaskQueue(id), id, REFRESH_MS, live);
  useLiveEvents(TASK_EVENT_KINDS, (event) => void (event.task_id === id && queue.reload()), live);
  const [note, setNote] = useState<string | undefined>();
  const count = (queue.data?.steering.length ?? 0) + (queue.data?.follow_up.length ?? 0);

  async function clear() {
    try {
      const result = await client.clearTaskQueue(id);
      setNote(`${t.taskCleared} ${result.cleared}`);
    } catch (error) {
      setNote(error instanceof Error ? error.message : String(error));
    }
    await queue.reload();
  }

  return (
    <section className="task-queues" aria-labelledby="task-queues">
      <h2 id="task-queues">{t.taskQueues}</h2>
      {queue.error && (
        <p role="alert" className="error">
          {t.loadError} {queue.error.message}
        </p>
      )}
      <QueueList title={t.taskSteering} items={queue.data?.steering ?? []} />
      <QueueList title={t.taskFollowUp} items={queue.data?.follow_up ?? []} />
      <button type="button" onClick={clear} disabled={count === 0}>
        {t.taskClearQueues}
      </button>
      {note && <p role="status">{note}</p>}
    </section>
  );
}

function QueueList({ title, items }: { title: string; items: QueuedMessage[] }) {
  const t = useMessages();
  return (
    <div>
      <h3>{title}</h3>
      <ul aria-label={title}>
        {items.length === 0 && <li className="empty">{t.taskQueueEmpty}</li>}
        {items.map((item) => (
          <li key={item.id} className="plain">
            {item.text}
          </li>
        ))}
      </ul>
    </div>
  );
}
