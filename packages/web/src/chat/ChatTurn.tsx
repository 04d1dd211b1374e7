import type { QueueItem } from "@assistant/client";
import { useEffect, useState } from "react";
import { client } from "../api.ts";
import { ApprovalItem } from "../approvals/ApprovalsDialog.tsx";
import { CopyButton } from "../CopyButton.tsx";
import { useMessages } from "../i18n.ts";
import { Markdown } from "../Markdown.tsx";
import type { ToolCall, Turn } from "./turns.ts";

/** One line of the chat: the person's, or an answer with its tool calls folded and its approvals inline. */
export function ChatTurn({ turn }: { turn: Turn }) {
  const t = useMessages();
  const who = turn.role === "user" ? t.you : t.assistant;
  return (
    <li className={`turn turn-${turn.role}${turn.failed ? " turn-failed" : ""}`}>
      <span className="who">
        {who}
        {turn.delivery ? ` · ${turn.delivery === "steering" ? t.chatSteering : t.chatFollowUp}` : ""}
        {turn.failed ? ` · ${t.failed}` : ""}
      </span>
      {turn.role === "user" ? (
        <p className="plain">{turn.text}</p>
      ) : (
        <>
          {turn.tools.length > 0 && <ToolCalls calls={turn.tools} />}
          {turn.approvals.map((approval) => (
            <InlineApproval key={approval.id} id={approval.id} resolved={approval.status} />
          ))}
          {turn.steered.map((steered) => (
            <p key={steered.id} className="muted">
              {t.chatSteered}: <span className="plain">{steered.text}</span>
            </p>
          ))}
          <div className="answer">{turn.text ? <Markdown text={turn.text} copyCode /> : t.thinking}</div>
          {turn.done && turn.text && !turn.failed && <CopyButton text={turn.text} label={t.copyAnswer} />}
        </>
      )}
    </li>
  );
}

/** The answer's tool calls, folded: a summary line each, the arguments and result when opened. */
function ToolCalls({ calls }: { calls: ToolCall[] }) {
  const t = useMessages();
  return (
    <details className="tool-calls">
      <summary>
        {t.chatToolCalls}: {calls.length}
      </summary>
      <ul>
        {calls.map((call) => (
          <li key={call.id}>
            <details className="tool-call">
              <summary>
                <code>{call.name}</code> · {call.status ?? t.chatToolRunning}
              </summary>
              <p className="muted">{t.approvalArgs}</p>
              <pre>{JSON.stringify(call.arguments, null, 2)}</pre>
              {call.output !== undefined && (
                <>
                  <p className="muted">{t.chatToolResult}</p>
                  <pre>{call.output}</pre>
                </>
              )}
            </details>
          </li>
        ))}
      </ul>
    </details>
  );
}

/** A tool call of this answer waiting for a decision, with the review queue's own controls. */
function InlineApproval({ id, resolved }: { id: string; resolved: string | undefined }) {
  const t = useMessages();
  const [item, setItem] = useState<QueueItem | undefined>();
  const [outcome, setOutcome] = useState<string | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    client.getQueueItem(id).then(setItem, (caught: unknown) => setError(String((caught as Error).message)));
  }, [id]);
  if (error)
    return (
      <p role="alert" className="error">
        {t.loadError} {error}
      </p>
    );
  if (outcome) return <p role="status">{outcome}</p>;
  if (!item) return <p className="muted">{t.chatApprovalLoading}</p>;
  // Decided elsewhere (the review queue, another surface): say how.
  if (resolved) return <p role="status">{`${item.tool}: ${resolved}`}</p>;
  return (
    <div className="chat-approval">
      <ApprovalItem item={item} onResolved={async (message) => setOutcome(message)} onOpenTask={() => {}} />
    </div>
  );
}
