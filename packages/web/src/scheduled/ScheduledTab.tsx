import type { Schedule } from "@assistant/client";
import { useState } from "react";
import { client } from "../api.ts";
import { useMessages } from "../i18n.ts";
import { usePolling } from "../tasks/usePolling.ts";
import { errorText } from "../usePoll.ts";
import { ScheduleForm } from "./ScheduleForm.tsx";
import { ScheduleRuns } from "./ScheduleRuns.tsx";
import { formatSeconds, formatWhen } from "./when.ts";

// The Scheduled tab: every schedule with its next fire time (polled), pause / resume, delete after a
// confirmation, the runs it created, and the form for a new one.

export function ScheduledTab() {
  const t = useMessages();
  const schedules = usePolling(() => client.listSchedules({ limit: 200 }), "schedules", 3_000);
  const [actionError, setActionError] = useState<string>();
  const [confirming, setConfirming] = useState<string>();
  const [open, setOpen] = useState<string>();

  async function act(action: () => Promise<unknown>) {
    try {
      await action();
      setActionError(undefined);
    } catch (error) {
      setActionError(errorText(error));
    }
    setConfirming(undefined);
    await schedules.reload();
  }

  const items = schedules.data?.items ?? [];
  return (
    <div className="sched">
      <h1>{t.schedTitle}</h1>
      {schedules.error && <p role="alert">{schedules.error.message}</p>}
      {actionError && (
        <p role="alert" className="field-error">
          {actionError}
        </p>
      )}
      {schedules.data && items.length === 0 && <p className="empty">{t.schedEmpty}</p>}
      <ul className="sched-list" aria-label={t.schedTitle}>
        {items.map((schedule) => (
          <li key={schedule.id} className="sched-item" aria-label={schedule.name}>
            <div className="sched-head">
              <strong>{schedule.name}</strong>
              <span className={`sched-status sched-${schedule.status}`}>
                {schedule.status === "active" ? t.schedActive : t.schedPaused}
              </span>
            </div>
            <p className="plain">{schedule.description}</p>
            <dl className="sched-facts">
              <dt>{t.schedWhen}</dt>
              <dd>{cadence(schedule)}</dd>
              <dt>{t.schedNextFire}</dt>
              <dd data-testid="sched-next">
                {schedule.status === "paused" ? "—" : formatWhen(schedule.next_run_at, t.locale)}
              </dd>
              <dt>{t.schedRunCount}</dt>
              <dd>{schedule.runs}</dd>
              {schedule.status_reason && (
                <>
                  <dt>{t.schedReason}</dt>
                  <dd>{schedule.status_reason}</dd>
                </>
              )}
            </dl>
            <div className="sched-actions">
              {schedule.status === "active" ? (
                <button type="button" onClick={() => act(() => client.pauseSchedule(schedule.id))}>
                  {t.schedPause}
                  <span className="visually-hidden"> {schedule.name}</span>
                </button>
              ) : (
                <button type="button" onClick={() => act(() => client.resumeSchedule(schedule.id))}>
                  {t.schedResume}
                  <span className="visually-hidden"> {schedule.name}</span>
                </button>
              )}
              <button
                type="button"
                aria-expanded={open === schedule.id}
                onClick={() => setOpen(open === schedule.id ? undefined : schedule.id)}
              >
                {t.schedRuns}
                <span className="visually-hidden"> {schedule.name}</span>
              </button>
              {confirming === schedule.id ? (
                <span className="sched-confirm">
                  {t.schedConfirmDelete(schedule.name)}{" "}
                  <button
                    type="button"
                    className="danger"
                    onClick={() => act(() => client.deleteSchedule(schedule.id))}
                  >
                    {t.schedDeleteYes}
                  </button>
                  <button type="button" onClick={() => setConfirming(undefined)}>
                    {t.schedCancel}
                  </button>
                </span>
              ) : (
                <button type="button" onClick={() => setConfirming(schedule.id)}>
                  {t.schedDelete}
                  <span className="visually-hidden"> {schedule.name}</span>
                </button>
              )}
            </div>
            {open === schedule.id && <ScheduleRuns schedule={schedule} />}
          </li>
        ))}
      </ul>
      <ScheduleForm onCreated={() => void schedules.reload()} />
    </div>
  );

  function cadence(schedule: Schedule): string {
    if (schedule.interval_secs !== null)
      return t.schedEvery(formatSeconds(schedule.interval_secs), schedule.interval_secs);
    return `cron ${schedule.cron}${schedule.timezone ? ` (${schedule.timezone})` : ""}`;
  }
}
