import type { Schedule } from "@assistant/client";
import { client } from "../api.ts";
import { useMessages } from "../i18n.ts";
import { TaskLink } from "../tasks/TaskLink.tsx";
import { usePolling } from "../tasks/usePolling.ts";
import { formatWhen } from "./when.ts";

// The runs of one schedule: each run is a task in the schedule's own session (scheduler/README.md), newest first.

export function ScheduleRuns({ schedule }: { schedule: Schedule }) {
  const t = useMessages();
  const runs = usePolling(
    () => client.listTasks({ session_id: schedule.session_id, limit: 50 }),
    schedule.session_id,
    5_000,
  );
  const items = runs.data?.items.filter((task) => task.origin === "schedule") ?? [];
  return (
    <section className="sched-runs" aria-label={t.schedRunsOf(schedule.name)}>
      <h3>{t.schedRuns}</h3>
      {runs.error && <p role="alert">{runs.error.message}</p>}
      {runs.data && items.length === 0 && <p className="empty">{t.schedNoRuns}</p>}
      {items.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">{t.schedRunStarted}</th>
              <th scope="col">{t.schedRunStatus}</th>
              <th scope="col">{t.schedRunTask}</th>
            </tr>
          </thead>
          <tbody>
            {items.map((task) => (
              <tr key={task.id}>
                <td>{formatWhen(task.created_at, t.locale)}</td>
                <td>
                  {task.status}
                  {task.reason ? ` (${task.reason})` : ""}
                </td>
                <td>
                  <TaskLink id={task.id}>
                    <code>{task.id.slice(0, 8)}</code>
                  </TaskLink>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
