import { ApiError, type Mission } from "@assistant/client";
import { type FormEvent, useEffect, useState } from "react";
import { parseInterval } from "../../../assistant/src/scheduler/interval.ts";
import { client } from "../api.ts";
import { useMessages } from "../i18n.ts";
import { formatSeconds } from "../scheduled/when.ts";
import { errorText } from "../usePoll.ts";

// The keys of autonomous_mission.yaml, saved through PUT /api/autonomous-mission (only the keys that changed; an
// emptied field removes its key so its default applies). The daemon validates the merged file: what it refuses
// is shown next to the key it names (an unknown task type comes with its close match).

type Key = "objective" | "heartbeat_secs" | "report_dir" | "heartbeat_preferred_task_type" | "enabled";
interface Draft {
  objective: string;
  heartbeat: string;
  report_dir: string;
  heartbeat_preferred_task_type: string;
  enabled: boolean;
}

function draftOf(mission: Mission): Draft {
  return {
    objective: mission.objective ?? "",
    heartbeat: mission.heartbeat_secs === null ? "" : formatSeconds(mission.heartbeat_secs),
    report_dir: mission.report_dir ?? "",
    heartbeat_preferred_task_type: mission.heartbeat_preferred_task_type ?? "",
    enabled: mission.enabled ?? false,
  };
}

const orNull = (text: string) => (text.trim() ? text.trim() : null);

export function MissionForm({ mission, onSaved }: { mission: Mission; onSaved: (mission: Mission) => void }) {
  const t = useMessages();
  const [draft, setDraft] = useState<Draft>(() => draftOf(mission));
  const [errors, setErrors] = useState<Partial<Record<Key | "form", string>>>({});
  const [saved, setSaved] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [taskTypes, setTaskTypes] = useState<string[]>([]);

  useEffect(() => {
    client.listRouterRoutes().then(
      (routes) => setTaskTypes(routes.items.map((route) => route.category)),
      () => setTaskTypes([]),
    );
  }, []);

  const seconds = draft.heartbeat.trim() ? parseInterval(draft.heartbeat) : null;
  const set = (change: Partial<Draft>) => {
    setDraft((all) => ({ ...all, ...change }));
    setSaved(undefined);
  };

  async function save(event: FormEvent) {
    event.preventDefault();
    if (seconds === undefined) {
      setErrors({ heartbeat_secs: t.missionHeartbeatForms });
      return;
    }
    const before = draftOf(mission);
    const changes: Record<string, unknown> = {};
    if (draft.objective !== before.objective) changes.objective = orNull(draft.objective);
    if (seconds !== (mission.heartbeat_secs ?? null)) changes.heartbeat_secs = seconds;
    if (draft.report_dir !== before.report_dir) changes.report_dir = orNull(draft.report_dir);
    if (draft.heartbeat_preferred_task_type !== before.heartbeat_preferred_task_type) {
      changes.heartbeat_preferred_task_type = orNull(draft.heartbeat_preferred_task_type);
    }
    if (draft.enabled !== before.enabled) changes.enabled = draft.enabled;
    if (Object.keys(changes).length === 0) {
      setErrors({});
      setSaved(t.missionUnchanged);
      return;
    }
    setBusy(true);
    try {
      const next = await client.updateMission(changes);
      setErrors({});
      setDraft(draftOf(next));
      setSaved(t.missionSaved);
      onSaved(next);
    } catch (error) {
      const field = error instanceof ApiError ? String(error.details?.field ?? "") : "";
      const reason = error instanceof ApiError ? error.details?.reason : undefined;
      if ((KEYS as string[]).includes(field))
        setErrors({ [field]: typeof reason === "string" ? reason : errorText(error) });
      else setErrors({ form: errorText(error) });
    } finally {
      setBusy(false);
    }
  }

  const problem = (key: Key | "form") =>
    errors[key] ? (
      <p id={`mission-${key}-error`} className="field-error" role="alert">
        {errors[key]}
      </p>
    ) : undefined;
  const invalid = (key: Key) => ({
    "aria-invalid": Boolean(errors[key]),
    "aria-describedby": errors[key] ? `mission-${key}-error` : undefined,
  });

  return (
    <form className="mission-form" onSubmit={save} noValidate aria-labelledby="mission-edit">
      <h2 id="mission-edit">{t.missionEdit}</h2>
      <label htmlFor="mission-objective">{t.missionObjective}</label>
      <textarea
        id="mission-objective"
        rows={3}
        value={draft.objective}
        onChange={(e) => set({ objective: e.target.value })}
        {...invalid("objective")}
      />
      {problem("objective")}
      <label htmlFor="mission-heartbeat">{t.missionHeartbeat}</label>
      <input
        id="mission-heartbeat"
        value={draft.heartbeat}
        placeholder="1h"
        onChange={(e) => set({ heartbeat: e.target.value })}
        {...invalid("heartbeat_secs")}
      />
      <p className="hint">{seconds ? t.schedEvery(formatSeconds(seconds), seconds) : t.missionHeartbeatHint}</p>
      {problem("heartbeat_secs")}
      <label htmlFor="mission-report-dir">{t.missionReportDir}</label>
      <input
        id="mission-report-dir"
        value={draft.report_dir}
        placeholder="reports"
        onChange={(e) => set({ report_dir: e.target.value })}
        {...invalid("report_dir")}
      />
      {mission.report_dir_path && <p className="hint">{mission.report_dir_path}</p>}
      {problem("report_dir")}
      <label htmlFor="mission-task-type">{t.missionTaskType}</label>
      <input
        id="mission-task-type"
        list="mission-task-types"
        value={draft.heartbeat_preferred_task_type}
        placeholder="conversation"
        onChange={(e) => set({ heartbeat_preferred_task_type: e.target.value })}
        {...invalid("heartbeat_preferred_task_type")}
      />
      <datalist id="mission-task-types">
        {taskTypes.map((type) => (
          <option key={type} value={type} />
        ))}
      </datalist>
      {problem("heartbeat_preferred_task_type")}
      <label className="check">
        <input
          type="checkbox"
          checked={draft.enabled}
          onChange={(e) => set({ enabled: e.target.checked })}
          {...invalid("enabled")}
        />{" "}
        {t.missionEnabled}
      </label>
      {problem("enabled")}
      {problem("form")}
      <div className="mission-save">
        <button type="submit" disabled={busy}>
          {t.missionSave}
        </button>
        {saved && <span role="status">{saved}</span>}
      </div>
    </form>
  );
}

const KEYS: Key[] = ["objective", "heartbeat_secs", "report_dir", "heartbeat_preferred_task_type", "enabled"];
