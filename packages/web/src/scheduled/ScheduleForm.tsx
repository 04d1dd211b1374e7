import { ApiError, type Schedule } from "@assistant/client";
import { type FormEvent, useState } from "react";
import { INTERVAL_FORMS, parseInterval } from "../../../assistant/src/scheduler/interval.ts";
import { client } from "../api.ts";
import { useMessages } from "../i18n.ts";
import { errorText } from "../usePoll.ts";
import { previewCron } from "./cronPreview.ts";
import { formatDate, formatSeconds } from "./when.ts";

// A new schedule: its name, the message each run sends, and when it runs: an interval as people type it (the
// same parser as `assistant schedule create` and `/schedule`) or a cron expression with its next runs shown
// before saving. What the daemon refuses is shown next to the field it names.

type Field = "name" | "description" | "interval" | "cron" | "timezone" | "task_type" | "form";
type Errors = Partial<Record<Field, string>>;

const FIELD_OF: Record<string, Field> = {
  "body.name": "name",
  "body.description": "description",
  "body.interval_secs": "interval",
  "body.cron": "cron",
  "body.timezone": "timezone",
  "body.task_type": "task_type",
};

export function ScheduleForm({ onCreated }: { onCreated: (schedule: Schedule) => void }) {
  const t = useMessages();
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [kind, setKind] = useState<"interval" | "cron">("interval");
  const [interval, setInterval] = useState("1h");
  const [cron, setCron] = useState("0 9 * * mon-fri");
  const [timezone, setTimezone] = useState("");
  const [taskType, setTaskType] = useState("");
  const [errors, setErrors] = useState<Errors>({});
  const [busy, setBusy] = useState(false);

  const seconds = parseInterval(interval);
  const intervalProblem = interval.trim() && seconds === undefined ? t.schedIntervalForms(INTERVAL_FORMS) : undefined;
  const preview = kind === "cron" && cron.trim() ? previewCron(cron, timezone) : undefined;

  async function submit(event: FormEvent) {
    event.preventDefault();
    const local: Errors = {};
    if (!name.trim()) local.name = t.schedNameMissing;
    if (!description.trim()) local.description = t.schedDescriptionMissing;
    if (kind === "interval" && !interval.trim()) local.interval = t.schedIntervalForms(INTERVAL_FORMS);
    setErrors(local);
    // A bad interval or cron expression already says why under its field.
    if (Object.keys(local).length > 0 || intervalProblem || (kind === "cron" && preview?.error)) return;
    setBusy(true);
    try {
      const created = await client.createSchedule({
        name: name.trim(),
        description: description.trim(),
        ...(kind === "interval" ? { interval_secs: seconds } : { cron: cron.trim() }),
        ...(kind === "cron" && timezone.trim() ? { timezone: timezone.trim() } : {}),
        ...(taskType.trim() ? { task_type: taskType.trim() } : {}),
      });
      setName("");
      setDescription("");
      onCreated(created);
    } catch (error) {
      const field = error instanceof ApiError ? FIELD_OF[String(error.details?.field)] : undefined;
      setErrors({ [field ?? "form"]: errorText(error) });
    } finally {
      setBusy(false);
    }
  }

  const problem = (field: Field) =>
    errors[field] ? (
      <p id={`sched-${field}-error`} className="field-error" role="alert">
        {errors[field]}
      </p>
    ) : undefined;
  const described = (field: Field, hint?: string) =>
    [errors[field] ? `sched-${field}-error` : "", hint ?? ""].filter(Boolean).join(" ") || undefined;

  return (
    <form className="sched-form" onSubmit={submit} noValidate aria-labelledby="sched-new">
      <h2 id="sched-new">{t.schedNew}</h2>
      <label htmlFor="sched-name">{t.schedName}</label>
      <input
        id="sched-name"
        value={name}
        onChange={(e) => setName(e.target.value)}
        maxLength={100}
        aria-invalid={Boolean(errors.name)}
        aria-describedby={described("name")}
      />
      {problem("name")}
      <label htmlFor="sched-description">{t.schedDescription}</label>
      <textarea
        id="sched-description"
        rows={2}
        value={description}
        onChange={(e) => setDescription(e.target.value)}
        aria-invalid={Boolean(errors.description)}
        aria-describedby={described("description")}
      />
      {problem("description")}
      <fieldset className="sched-kind">
        <legend>{t.schedWhen}</legend>
        <label>
          <input type="radio" name="sched-kind" checked={kind === "interval"} onChange={() => setKind("interval")} />{" "}
          {t.schedKindInterval}
        </label>
        <label>
          <input type="radio" name="sched-kind" checked={kind === "cron"} onChange={() => setKind("cron")} />{" "}
          {t.schedKindCron}
        </label>
      </fieldset>
      {kind === "interval" ? (
        <>
          <label htmlFor="sched-interval">{t.schedInterval}</label>
          <input
            id="sched-interval"
            value={interval}
            onChange={(e) => setInterval(e.target.value)}
            aria-invalid={Boolean(errors.interval ?? intervalProblem)}
            aria-describedby={described("interval", "sched-interval-hint")}
          />
          <p id="sched-interval-hint" className="hint">
            {seconds !== undefined ? t.schedEvery(formatSeconds(seconds), seconds) : intervalProblem}
          </p>
          {problem("interval")}
        </>
      ) : (
        <>
          <label htmlFor="sched-cron">{t.schedCron}</label>
          <input
            id="sched-cron"
            value={cron}
            onChange={(e) => setCron(e.target.value)}
            aria-invalid={Boolean(errors.cron ?? preview?.error)}
            aria-describedby={described("cron", "sched-cron-preview")}
          />
          <label htmlFor="sched-timezone">{t.schedTimezone}</label>
          <input
            id="sched-timezone"
            value={timezone}
            placeholder="Europe/Paris"
            onChange={(e) => setTimezone(e.target.value)}
            aria-invalid={Boolean(errors.timezone)}
            aria-describedby={described("timezone")}
          />
          {problem("timezone")}
          <div id="sched-cron-preview" className="hint" aria-live="polite">
            {preview?.runs ? (
              <>
                {t.schedNextRuns}
                <ol className="sched-preview">
                  {preview.runs.map((ms) => (
                    <li key={ms}>{formatDate(ms, t.locale)}</li>
                  ))}
                </ol>
              </>
            ) : (
              preview?.error
            )}
          </div>
          {problem("cron")}
        </>
      )}
      <label htmlFor="sched-task-type">{t.schedTaskType}</label>
      <input
        id="sched-task-type"
        value={taskType}
        placeholder="conversation"
        onChange={(e) => setTaskType(e.target.value)}
        aria-invalid={Boolean(errors.task_type)}
        aria-describedby={described("task_type")}
      />
      {problem("task_type")}
      {problem("form")}
      <button type="submit" disabled={busy}>
        {t.schedCreate}
      </button>
    </form>
  );
}
