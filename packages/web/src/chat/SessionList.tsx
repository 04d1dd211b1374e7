import type { Session } from "@assistant/client";
import { useMessages } from "../i18n.ts";

/** The chat sessions, most recently active first; the current one is marked, another one opens on click. */
export function SessionList({
  sessions,
  current,
  disabled,
  onOpen,
  onNew,
}: {
  sessions: Session[];
  current: string | undefined;
  disabled: boolean;
  onOpen: (id: string) => void;
  onNew: () => void;
}) {
  const t = useMessages();
  return (
    <nav className="chat-sessions" aria-label={t.chatSessions}>
      <button type="button" onClick={onNew} disabled={disabled}>
        {t.newSession}
      </button>
      <ul>
        {sessions.length === 0 && <li className="empty">{t.chatNoSessions}</li>}
        {sessions.map((session) => (
          <li key={session.id}>
            <button
              type="button"
              className="session-button"
              aria-current={session.id === current ? "true" : undefined}
              disabled={disabled}
              onClick={() => onOpen(session.id)}
            >
              {session.title || session.id.slice(0, 8)}
              <span className="muted"> · {new Date(session.updated_at).toLocaleString()}</span>
            </button>
          </li>
        ))}
      </ul>
    </nav>
  );
}
