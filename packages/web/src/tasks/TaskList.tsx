import type { Task } from "@assistant/client";
import { useState } from "react";
import { client } from "../api.ts";
import { useMessages } from "../i18n.ts";
import { TASK_EVENT_KINDS, useLiveEvents } from "../liveEvents.ts";
import { TaskLink } from "./TaskLink.tsx";
import { usePolling } from "./usePolling.ts";

export const TASK_STATUSES = ["queued", "running", "waiting_approval", "completed", "failed", "cancelled"] as const;
type Status = (typeof TASK_STATUSES)[number];

// Live from the event stream; the slow poll covers a stream that is down.
const REFRESH_MS = 15_000;
const PAGE = 100;

/** Tasks newest first, filtered by status, refreshed every few seconds. */
export function TaskList() {
  const t = useMessages();
  const [status, setStatus] = useState<Status | "">("");
  const tasks = usePolling(
    () => client.listTasks({ limit: PAGE, ...(status ? { status } : {}) }),
    `status:${status}`,
    REFRESH_MS,
  );
  useLiveEvents(TASK_EVENT_KINDS, () => void tasks.reload());
  return (
    <section className="tasks" aria-labelledby="tasks-title">
      <div className="tasks-bar">
        <h1 id="tasks-title">{t.tasksTitle}</h1>
        <label>
          {t.tasksFilter}{" "}
          <select value={status} onChange={(e) => setStatus(e.target.value as Status | "")}>
            <option value="">{t.tasksAll}</option>
            {TASK_STATUSES.map((s) => (
              <option key={s} value={s}>
                {t.taskStatus[s]}
              </option>
            ))}
          </select>
        </label>
      </div>
      <p className="muted">{t.tasksLive}</p>
      {tasks.error && (
        <p role="alert" className="error">
          {t.loadError} {tasks.error.message}
        </p>
      )}
      {tasks.data && tasks.data.items.length === 0 && <p className="empty">{t.tasksEmpty}</p>}
      {tasks.data && tasks.data.items.length > 0 && (
        <table className="task-table">
          <thead>
            <tr>
              <th scope="col">{t.tasksColTask}</th>
              <th scope="col">{t.tasksColStatus}</th>
              <th scope="col">{t.tasksColType}</th>
              <th scope="col">{t.tasksColCreated}</th>
            </tr>
          </thead>
          <tbody>
            {tasks.data.items.map((task) => (
              <TaskRow key={task.id} task={task} />
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function TaskRow({ task }: { task: Task }) {
  const t = useMessages();
  return (
    <tr>
      <td>
        <TaskLink id={task.id}>{preview(task.message)}</TaskLink>
        {task.parent_id && <span className="muted"> · {t.taskSubtask}</span>}
      </td>
      <td>
        <span className={`task-status task-status-${task.status}`}>{t.taskStatus[task.status]}</span>
      </td>
      <td>{task.task_type ?? "—"}</td>
      <td>
        <time dateTime={task.created_at}>{new Date(task.created_at).toLocaleString()}</time>
      </td>
    </tr>
  );
}

export function preview(text: string, max = 80): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max)}…` : line;
}
