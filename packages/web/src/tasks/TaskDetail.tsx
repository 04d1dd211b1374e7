import { ApiError } from "@assistant/client";
import { useEffect, useState } from "react";
import { client } from "../api.ts";
import { useMessages } from "../i18n.ts";
import { TASK_EVENT_KINDS, useLiveEvents } from "../liveEvents.ts";
import { Markdown } from "../Markdown.tsx";
import { eventLine } from "./eventLine.ts";
import { TaskLink } from "./TaskLink.tsx";
import { TaskQueues } from "./TaskQueues.tsx";
import { TaskReportView } from "./TaskReportView.tsx";
import { FINAL_STATUSES } from "./taskPaths.ts";
import { usePolling } from "./usePolling.ts";

// Live from the event stream; the slow poll covers a stream that is down.
const REFRESH_MS = 10_000;
const EVENTS = 1000;

/** One task: its facts, cancel, the event timeline, the steering and follow-up queues, the report and sub-tasks. */
export function TaskDetail({ id }: { id: string }) {
  const t = useMessages();
  const [live, setLive] = useState(true);
  const task = usePolling(() => client.getTask(id), id, REFRESH_MS, live);
  // The events route reads the status before the events: a final status there means the timeline is complete.
  const events = usePolling(
    async () => {
      const page = await client.listTaskEvents(id, { limit: EVENTS });
      setLive(!FINAL_STATUSES.has(page.status));
      return page;
    },
    id,
    REFRESH_MS,
    live,
  );
  const { reload: reloadTask } = task;
  useLiveEvents(
    TASK_EVENT_KINDS,
    (event) => {
      if (event.task_id !== id) return;
      void reloadTask();
      void events.reload();
    },
    live,
  );
  useEffect(() => {
    if (!live) void reloadTask();
  }, [live, reloadTask]);
  const [cancelNote, setCancelNote] = useState<string | undefined>();

  if (task.error instanceof ApiError && task.error.code === "not_found") {
    return (
      <section className="task-detail">
        <TaskLink id={undefined}>← {t.taskBack}</TaskLink>
        <p role="alert" className="error">
          {t.taskNotFound} <code>{id}</code>
        </p>
      </section>
    );
  }
  const record = task.data;
  const final = record ? FINAL_STATUSES.has(record.status) : false;

  async function cancel() {
    try {
      await client.cancelTask(id);
      setCancelNote(t.taskCancelAsked);
    } catch (error) {
      setCancelNote(error instanceof Error ? error.message : String(error));
    }
    await Promise.all([task.reload(), events.reload()]);
  }

  return (
    <section className="task-detail" aria-labelledby="task-title">
      <TaskLink id={undefined}>← {t.taskBack}</TaskLink>
      <h1 id="task-title">
        {t.taskTitle} <code>{id.slice(0, 8)}</code>
      </h1>
      {task.error && (
        <p role="alert" className="error">
          {t.loadError} {task.error.message}
        </p>
      )}
      {record && (
        <>
          <dl className="task-facts">
            <dt>{t.tasksColStatus}</dt>
            <dd>
              <span className={`task-status task-status-${record.status}`} data-testid="task-status">
                {t.taskStatus[record.status]}
              </span>
              {record.reason && ` (${record.reason})`}
            </dd>
            <dt>{t.tasksColType}</dt>
            <dd>{record.task_type ?? "—"}</dd>
            <dt>{t.taskOrigin}</dt>
            <dd>{record.origin}</dd>
            {record.parent_id && (
              <>
                <dt>{t.taskParent}</dt>
                <dd>
                  <TaskLink id={record.parent_id}>{record.parent_id.slice(0, 8)}</TaskLink>
                </dd>
              </>
            )}
            <dt>{t.taskModel}</dt>
            <dd>{record.model ? `${record.provider ?? ""} ${record.model}`.trim() : "—"}</dd>
            <dt>{t.taskUsage}</dt>
            <dd>
              {record.rounds} · {record.input_tokens} / {record.output_tokens} · ${record.cost_usd.toFixed(4)}
            </dd>
            <dt>{t.tasksColCreated}</dt>
            <dd>
              <time dateTime={record.created_at}>{new Date(record.created_at).toLocaleString()}</time>
            </dd>
          </dl>
          {!final && (
            <button type="button" className="danger" onClick={cancel}>
              {t.taskCancel}
            </button>
          )}
          {cancelNote && <p role="status">{cancelNote}</p>}
          <h2>{t.taskMessage}</h2>
          <p className="plain">{record.message}</p>
          {record.reply && (
            <>
              <h2>{t.taskReply}</h2>
              <div className="answer">
                <Markdown text={record.reply} />
              </div>
            </>
          )}
        </>
      )}
      <h2 id="task-timeline">{t.taskTimeline}</h2>
      {events.error && (
        <p role="alert" className="error">
          {t.loadError} {events.error.message}
        </p>
      )}
      <ol className="timeline" aria-labelledby="task-timeline">
        {events.data?.items.length === 0 && <li className="empty">{t.taskNoEvents}</li>}
        {events.data?.items.map((event) => (
          <li key={event.id}>
            <time dateTime={event.ts}>{new Date(event.ts).toLocaleTimeString()}</time>{" "}
            <span className="event-line">{eventLine(event)}</span>
          </li>
        ))}
      </ol>
      <TaskQueues id={id} live={live} />
      {record && final && <TaskReportView id={id} />}
      {record && !final && <p className="muted">{t.taskReportLater}</p>}
    </section>
  );
}
