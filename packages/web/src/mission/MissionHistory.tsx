import type { StoredEvent, TaskReport } from "@assistant/client";
import { useState } from "react";
import { client } from "../api.ts";
import { type Messages, useMessages } from "../i18n.ts";
import { Markdown } from "../Markdown.tsx";
import { formatWhen } from "../scheduled/when.ts";
import { errorText } from "../usePoll.ts";

// The mission's events (newest first) and the reports of its past cycles. A cycle's report file is written from
// its task's report (mission/missionReports.ts), so the report shown is the task's, read through the API.

interface CycleReport {
  cycle: number;
  path: string;
  taskId: string | undefined;
  ts: string;
}

export function MissionHistory({ events }: { events: StoredEvent[] }) {
  const t = useMessages();
  const reports = cycleReports(events);
  return (
    <>
      <section aria-labelledby="mission-reports">
        <h2 id="mission-reports">{t.missionReports}</h2>
        {reports.length === 0 && <p className="empty">{t.missionNoReports}</p>}
        <ul className="mission-reports">
          {reports.map((report) => (
            <ReportEntry key={report.cycle} report={report} />
          ))}
        </ul>
      </section>
      <section aria-labelledby="mission-events">
        <h2 id="mission-events">{t.missionEvents}</h2>
        {events.length === 0 && <p className="empty">{t.missionNoEvents}</p>}
        <ol className="mission-events">
          {events.map((event) => (
            <li key={event.id}>
              <span className="who">{formatWhen(event.ts, t.locale)}</span> <code>{event.kind}</code>{" "}
              {describe(event, t)}
            </li>
          ))}
        </ol>
      </section>
    </>
  );
}

function ReportEntry({ report }: { report: CycleReport }) {
  const t = useMessages();
  const [shown, setShown] = useState<TaskReport>();
  const [error, setError] = useState<string>();
  const [open, setOpen] = useState(false);

  async function toggle() {
    setOpen(!open);
    if (open || shown || !report.taskId) return;
    try {
      setShown(await client.getTaskReport(report.taskId));
    } catch (failure) {
      setError(errorText(failure));
    }
  }

  return (
    <li>
      <span>
        {t.missionCycle(report.cycle)} · {formatWhen(report.ts, t.locale)} · <code>{report.path}</code>
      </span>{" "}
      {report.taskId && (
        <button type="button" aria-expanded={open} onClick={toggle}>
          {open ? t.missionHideReport : t.missionShowReport}
          <span className="visually-hidden"> {t.missionCycle(report.cycle)}</span>
        </button>
      )}
      {open && error && <p role="alert">{error}</p>}
      {open && shown && (
        <div className="mission-report">
          <p>
            {t.missionReportStatus}: {shown.status}
            {shown.reason ? ` (${shown.reason})` : ""}
          </p>
          {shown.reply && (
            <div className="answer">
              <Markdown text={shown.reply} />
            </div>
          )}
          {(
            [
              [t.missionDone, shown.done],
              [t.missionNeedsReview, shown.needs_review],
              [t.missionFailed, shown.failed],
              [t.missionNextSteps, shown.next_steps],
            ] as const
          ).map(([title, items]) =>
            items.length === 0 ? null : (
              <div key={title}>
                <h3>{title}</h3>
                <ul>
                  {items.map((item) => (
                    <li key={item.text}>
                      <Markdown text={item.text} />
                    </li>
                  ))}
                </ul>
              </div>
            ),
          )}
        </div>
      )}
    </li>
  );
}

/** The final report of each cycle (interim ones are superseded), with the task the cycle ran. */
function cycleReports(events: StoredEvent[]): CycleReport[] {
  const tasks = new Map<number, string>();
  for (const event of events) {
    if (event.kind === "mission_heartbeat" || event.kind === "mission_cycle_finished") {
      tasks.set(event.data.cycle, event.data.task_id);
    }
  }
  return events.flatMap((event) =>
    event.kind === "mission_report" && !event.data.interim
      ? [{ cycle: event.data.cycle, path: event.data.path, taskId: tasks.get(event.data.cycle), ts: event.ts }]
      : [],
  );
}

function describe(event: StoredEvent, t: Messages): string {
  switch (event.kind) {
    case "mission_state_changed":
      return `${event.data.previous} → ${event.data.status}${event.data.reason ? ` (${event.data.reason})` : ""}`;
    case "mission_heartbeat":
      return `${t.missionCycle(event.data.cycle)} (${event.data.task_type})`;
    case "mission_cycle_finished":
      return `${t.missionCycle(event.data.cycle)}: ${event.data.status}${event.data.reason ? ` (${event.data.reason})` : ""}`;
    case "mission_report":
      return `${t.missionCycle(event.data.cycle)}: ${event.data.path}`;
    case "mission_updated":
      return event.data.fields.join(", ");
    default:
      return "";
  }
}
