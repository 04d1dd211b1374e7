import type { Mission } from "@assistant/client";
import { useState } from "react";
import { client } from "../api.ts";
import { useMessages } from "../i18n.ts";
import { formatWhen } from "../scheduled/when.ts";
import { usePolling } from "../tasks/usePolling.ts";
import { errorText } from "../usePoll.ts";
import { MissionForm } from "./MissionForm.tsx";
import { MissionHistory } from "./MissionHistory.tsx";

// The Mission tab: its status (idle / running / paused, and why), pause / resume, the edit form of
// autonomous_mission.yaml, its events and the reports of past cycles, polled every few seconds.

export function MissionTab() {
  const t = useMessages();
  const mission = usePolling(() => client.getMission(), "mission", 3_000);
  const events = usePolling(() => client.listMissionEvents({ limit: 100 }), "mission-events", 3_000);
  const [actionError, setActionError] = useState<string>();
  // The form is built from the first answer (and from each save), never reset by a poll while being edited.
  const [formBase, setFormBase] = useState<Mission>();
  const view = mission.data;
  if (view && !formBase) setFormBase(view);

  async function act(action: () => Promise<Mission>) {
    try {
      await action();
      setActionError(undefined);
    } catch (error) {
      setActionError(errorText(error));
    }
    await Promise.all([mission.reload(), events.reload()]);
  }

  return (
    <div className="mission">
      <h1>{t.missionTitle}</h1>
      {mission.error && <p role="alert">{mission.error.message}</p>}
      {view && (
        <section className="mission-status" aria-labelledby="mission-status">
          <h2 id="mission-status">{t.missionStatus}</h2>
          <p>
            <strong data-testid="mission-status" className={`mission-state mission-${view.status}`}>
              {t.missionStates[view.status]}
            </strong>
            {view.status_reason && ` (${view.status_reason})`}
          </p>
          {view.status_message && <p className="hint">{view.status_message}</p>}
          {view.error && (
            <p className="field-error" role="alert">
              {view.error.key}: {view.error.reason}
            </p>
          )}
          <dl className="sched-facts">
            <dt>{t.missionCycles}</dt>
            <dd>{view.cycles}</dd>
            {view.current_cycle !== null && (
              <>
                <dt>{t.missionCurrent}</dt>
                <dd>{t.missionCycle(view.current_cycle)}</dd>
              </>
            )}
            <dt>{t.missionNextHeartbeat}</dt>
            <dd>{view.next_heartbeat_at ? formatWhen(view.next_heartbeat_at, t.locale) : "—"}</dd>
            {view.last_cycle && (
              <>
                <dt>{t.missionLastCycle}</dt>
                <dd>
                  {t.missionCycle(view.last_cycle.cycle)}: {view.last_cycle.status}
                  {view.last_cycle.reason ? ` (${view.last_cycle.reason})` : ""}
                </dd>
              </>
            )}
          </dl>
          {view.status === "paused" ? (
            <button type="button" onClick={() => act(() => client.resumeMission())}>
              {t.missionResume}
            </button>
          ) : (
            <button type="button" onClick={() => act(() => client.pauseMission())}>
              {t.missionPause}
            </button>
          )}
          {actionError && (
            <p className="field-error" role="alert">
              {actionError}
            </p>
          )}
        </section>
      )}
      {formBase && (
        <MissionForm
          mission={formBase}
          onSaved={(saved) => {
            setFormBase(saved);
            void mission.reload();
            void events.reload();
          }}
        />
      )}
      {events.error && <p role="alert">{events.error.message}</p>}
      {events.data && <MissionHistory events={events.data.items} />}
    </div>
  );
}
