import type { QueueItem } from "@assistant/client";
import { useEffect, useRef, useState } from "react";
import { client } from "../api.ts";
import { useMessages } from "../i18n.ts";
import { navigate, taskPath } from "../tasks/taskPaths.ts";
import { usePolling } from "../tasks/usePolling.ts";

const REFRESH_MS = 2_000;

/**
 * The review queue, opened from the status strip's badge: each pending tool call with its arguments and notice,
 * approved (optionally "always" for its scope, which records an allow decision) or denied with an optional note.
 * A native modal <dialog>: focus stays inside, Escape closes it.
 */
export function ApprovalsDialog({
  open,
  onClose,
  onChange,
}: {
  open: boolean;
  onClose: () => void;
  onChange: () => void;
}) {
  const t = useMessages();
  const dialog = useRef<HTMLDialogElement>(null);
  const pending = usePolling(
    () => client.listQueueItems({ status: "pending", limit: 100 }),
    open ? "open" : "",
    REFRESH_MS,
    open,
  );
  const [outcome, setOutcome] = useState<string | undefined>();

  useEffect(() => {
    const element = dialog.current;
    if (!element) return;
    if (open && !element.open) element.showModal();
    if (!open && element.open) element.close();
  }, [open]);

  const resolved = async (message: string) => {
    setOutcome(message);
    await pending.reload();
    onChange();
  };

  return (
    <dialog ref={dialog} className="approvals" aria-labelledby="approvals-title" onClose={onClose}>
      <div className="approvals-head">
        <h2 id="approvals-title">{t.approvalsTitle}</h2>
        <button type="button" onClick={onClose}>
          {t.approvalsClose}
        </button>
      </div>
      {outcome && <p role="status">{outcome}</p>}
      {pending.error && (
        <p role="alert" className="error">
          {t.loadError} {pending.error.message}
        </p>
      )}
      {pending.data?.items.length === 0 && <p className="empty">{t.approvalsEmpty}</p>}
      <ul className="approval-list">
        {pending.data?.items.map((item) => (
          <li key={item.id}>
            <ApprovalItem item={item} onResolved={resolved} onOpenTask={onClose} />
          </li>
        ))}
      </ul>
    </dialog>
  );
}

export function ApprovalItem({
  item,
  onResolved,
  onOpenTask,
}: {
  item: QueueItem;
  onResolved: (message: string) => Promise<void>;
  onOpenTask: () => void;
}) {
  const t = useMessages();
  const [note, setNote] = useState("");
  const [always, setAlways] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const base = `approval-${item.id}`;

  async function act(action: "approve" | "deny") {
    setBusy(true);
    setError(undefined);
    const body = note.trim() ? { note: note.trim() } : {};
    try {
      if (action === "approve") {
        const done = await client.approveQueueItem(item.id, { ...body, ...(always ? { always: true } : {}) });
        await onResolved(
          `${t.approvalApproved}: ${item.tool}${done.decision ? ` · ${t.approvalDecisionSaved} ${done.decision.scope}` : ""}`,
        );
      } else {
        await client.denyQueueItem(item.id, body);
        await onResolved(`${t.approvalDenied}: ${item.tool}`);
      }
    } catch (caught) {
      setError(caught instanceof Error ? caught.message : String(caught));
      setBusy(false);
    }
  }

  return (
    <article className="approval" aria-labelledby={`${base}-tool`}>
      <h3 id={`${base}-tool`}>{item.tool}</h3>
      {item.notice && (
        <p className="approval-notice">
          <strong>{item.notice}</strong>
        </p>
      )}
      <p className="muted">{t.approvalArgs}</p>
      <pre>{item.arguments_summary}</pre>
      <p className="muted">
        {t.approvalRule}: <code>{item.rule}</code>
        {item.task_id && (
          <>
            {" · "}
            <a
              href={taskPath(item.task_id)}
              onClick={(event) => {
                if (event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey) return;
                event.preventDefault();
                onOpenTask();
                navigate(taskPath(item.task_id!));
              }}
            >
              {t.approvalTask} {item.task_id.slice(0, 8)}
            </a>
          </>
        )}
      </p>
      <label htmlFor={`${base}-note`}>{t.approvalNote}</label>
      <textarea id={`${base}-note`} rows={2} maxLength={2000} value={note} onChange={(e) => setNote(e.target.value)} />
      {item.scope && (
        <label className="approval-always">
          <input type="checkbox" checked={always} onChange={(e) => setAlways(e.target.checked)} /> {t.approvalAlways}{" "}
          <code>{item.scope}</code>
        </label>
      )}
      <div className="approval-actions">
        <button type="button" disabled={busy} onClick={() => act("approve")}>
          {t.approvalApprove}
        </button>
        <button type="button" className="danger" disabled={busy} onClick={() => act("deny")}>
          {t.approvalDeny}
        </button>
      </div>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
    </article>
  );
}
