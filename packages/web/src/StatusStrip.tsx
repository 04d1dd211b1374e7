import { useEffect, useMemo, useState } from "react";
import { client } from "./api.ts";
import { ApprovalsDialog } from "./approvals/ApprovalsDialog.tsx";
import { coalesce } from "./coalesce.ts";
import { useMessages } from "./i18n.ts";
import { useLiveEvents } from "./liveEvents.ts";

interface Status {
  up: boolean;
  version?: string;
  model?: string;
  running?: number;
  approvals?: number;
}

// Live from the event stream (liveEvents.ts); the slow poll also notices a daemon that went away.
const REFRESH_MS = 30_000;
const LIVE_KINDS = ["task_created", "task_state_changed", "approval_requested", "approval_resolved"] as const;

/**
 * Daemon, embedded model, running tasks and pending approvals, refreshed as task and approval events arrive; the
 * approvals badge opens the review queue.
 */
export function StatusStrip() {
  const t = useMessages();
  const [status, setStatus] = useState<Status>({ up: true });
  const [reviewing, setReviewing] = useState(false);
  // Coalesced: a burst of events (a busy session) reloads at most once more, not once per event.
  const refresh = useMemo(
    () =>
      coalesce(async () => {
        try {
          const [daemon, running, approvals] = await Promise.all([
            client.getStatus(),
            client.listTasks({ status: "running", limit: 500 }),
            client.listQueueItems({ status: "pending", limit: 500 }),
          ]);
          setStatus({
            up: true,
            version: daemon.version,
            model: daemon.embedded.status,
            running: running.items.length,
            approvals: approvals.items.length,
          });
        } catch {
          setStatus({ up: false });
        }
      }),
    [],
  );
  useEffect(() => {
    void refresh();
    const timer = window.setInterval(refresh, REFRESH_MS);
    return () => window.clearInterval(timer);
  }, [refresh]);
  useLiveEvents(LIVE_KINDS, () => void refresh());
  return (
    <section className="status" aria-label={t.status}>
      <span data-testid="status-daemon">
        {t.daemon}: {status.up ? `${t.up}${status.version ? ` (v${status.version})` : ""}` : t.unreachable}
      </span>
      {status.model !== undefined && (
        <span data-testid="status-model">
          {t.model}: {status.model}
        </span>
      )}
      {status.running !== undefined && (
        <span data-testid="status-running">
          {t.running}: {status.running}
        </span>
      )}
      {status.approvals !== undefined && (
        <span data-testid="status-approvals">
          <button
            type="button"
            className={status.approvals > 0 ? "badge badge-on" : "badge"}
            aria-haspopup="dialog"
            onClick={() => setReviewing(true)}
          >
            {t.approvals}: {status.approvals}
          </button>
        </span>
      )}
      <ApprovalsDialog open={reviewing} onClose={() => setReviewing(false)} onChange={() => void refresh()} />
    </section>
  );
}
