import { ApiError } from "@assistant/client";
import { type FormEvent, useRef, useState } from "react";
import { client } from "./api.ts";
import { useMessages } from "./i18n.ts";
import { Markdown } from "./Markdown.tsx";

interface Turn {
  id: number;
  role: "user" | "assistant";
  text: string;
  failed?: boolean;
}

/** One chat session: the message is sent with `stream: true` and the answer grows as its tokens arrive. */
export function ChatTab() {
  const t = useMessages();
  const [sessionId, setSessionId] = useState<string | undefined>();
  const [turns, setTurns] = useState<Turn[]>([]);
  const [draft, setDraft] = useState("");
  const [busy, setBusy] = useState(false);
  const nextId = useRef(0);

  const update = (id: number, change: (turn: Turn) => Turn) =>
    setTurns((all) => all.map((turn) => (turn.id === id ? change(turn) : turn)));

  async function send(event?: FormEvent) {
    event?.preventDefault();
    const message = draft.trim();
    if (!message || busy) return;
    setDraft("");
    setBusy(true);
    const answerId = nextId.current + 1;
    nextId.current += 2;
    setTurns((all) => [
      ...all,
      { id: answerId - 1, role: "user", text: message },
      { id: answerId, role: "assistant", text: "" },
    ]);
    try {
      const stream = client.sendMessageStream({ message, ...(sessionId ? { session_id: sessionId } : {}) });
      for await (const frame of stream) {
        if (frame.event === "start") setSessionId(frame.data.session_id);
        else if (frame.event === "token") update(answerId, (turn) => ({ ...turn, text: turn.text + frame.data.delta }));
        else if (frame.event === "reset") update(answerId, (turn) => ({ ...turn, text: "" }));
        else if (frame.event === "done") update(answerId, (turn) => ({ ...turn, text: frame.data.reply }));
        else if (frame.event === "error") {
          update(answerId, (turn) => ({ ...turn, text: frame.data.error.message, failed: true }));
        }
      }
    } catch (error) {
      const text = error instanceof ApiError ? error.message : String(error);
      update(answerId, (turn) => ({ ...turn, text, failed: true }));
    } finally {
      setBusy(false);
    }
  }

  function newSession() {
    setSessionId(undefined);
    setTurns([]);
  }

  return (
    <div className="chat">
      <div className="chat-bar">
        <span>
          {t.session}: <code>{sessionId ?? t.noSession}</code>
        </span>
        <button type="button" onClick={newSession} disabled={busy}>
          {t.newSession}
        </button>
      </div>
      <ol className="turns" aria-live="polite">
        {turns.length === 0 && <li className="empty">{t.chatEmpty}</li>}
        {turns.map((turn) => (
          <li key={turn.id} className={`turn turn-${turn.role}${turn.failed ? " turn-failed" : ""}`}>
            <span className="who">
              {turn.role === "user" ? t.you : t.assistant}
              {turn.failed ? ` · ${t.failed}` : ""}
            </span>
            {turn.role === "user" ? (
              <p className="plain">{turn.text}</p>
            ) : (
              <div className="answer">{turn.text ? <Markdown text={turn.text} /> : t.thinking}</div>
            )}
          </li>
        ))}
      </ol>
      <form className="composer" onSubmit={send}>
        <label htmlFor="message" className="visually-hidden">
          {t.message}
        </label>
        <textarea
          id="message"
          rows={2}
          value={draft}
          onChange={(e) => setDraft(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && !e.shiftKey) {
              e.preventDefault();
              void send();
            }
          }}
        />
        <button type="submit" disabled={busy || !draft.trim()}>
          {t.send}
        </button>
      </form>
    </div>
  );
}
