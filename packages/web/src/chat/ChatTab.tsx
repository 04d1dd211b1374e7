import type { Session } from "@assistant/client";
import { useCallback, useEffect, useRef, useState } from "react";
import { client } from "../api.ts";
import { useMessages } from "../i18n.ts";
import { errorText } from "../usePoll.ts";
import { ChatTurn } from "./ChatTurn.tsx";
import { Composer, type Delivery } from "./Composer.tsx";
import { SessionList } from "./SessionList.tsx";
import { loadSlashCommands, type SlashCommand } from "./slashCommands.ts";
import { answerTurn, applyFrame, type Turn, turnsOfMessages, userTurn } from "./turns.ts";

const SESSIONS = 50;
const HISTORY = 200;

/**
 * The chat: the sessions list, the conversation of the current session streamed from `POST /api/message
 * {stream: true}` (tool calls folded under each answer, approvals inline), steering, follow-up and cancel while its
 * task runs, and the daemon's slash commands completed as they are typed.
 */
export function ChatTab() {
  const t = useMessages();
  const [sessions, setSessions] = useState<Session[]>([]);
  const [sessionId, setSessionId] = useState<string | undefined>();
  const [turns, setTurns] = useState<Turn[]>([]);
  const [running, setRunning] = useState<{ answer: string; taskId?: string } | undefined>();
  const [commands, setCommands] = useState<SlashCommand[]>([]);
  const [note, setNote] = useState<string | undefined>();
  const asked = useRef(false);
  const nextId = useRef(0);
  const newId = () => `local-${nextId.current++}`;

  const loadSessions = useCallback(async () => {
    try {
      setSessions((await client.listSessions({ limit: SESSIONS })).items);
    } catch (error) {
      setNote(`${t.loadError} ${errorText(error)}`);
    }
  }, [t]);
  useEffect(() => {
    void loadSessions();
  }, [loadSessions]);

  const update = (id: string, change: (turn: Turn) => Turn) =>
    setTurns((all) => all.map((turn) => (turn.id === id ? change(turn) : turn)));

  async function openSession(id: string) {
    setNote(undefined);
    try {
      const page = await client.listSessionMessages(id, { limit: HISTORY });
      setSessionId(id);
      setTurns(turnsOfMessages(page.items));
    } catch (error) {
      setNote(`${t.loadError} ${errorText(error)}`);
    }
  }

  async function loadCommands() {
    if (asked.current) return;
    asked.current = true;
    try {
      const loaded = await loadSlashCommands(sessionId);
      setCommands(loaded.commands);
      if (!sessionId) setSessionId(loaded.sessionId);
    } catch (error) {
      asked.current = false;
      setNote(`${t.chatCommandsError} ${errorText(error)}`);
    }
  }

  async function deliver(text: string, mode: Delivery) {
    setTurns((all) => [...all, userTurn(newId(), text, mode)]);
    try {
      await client.sendMessage({
        message: text,
        ...(running?.taskId ? { task_id: running.taskId } : { session_id: sessionId! }),
        message_delivery_mode: mode,
      });
    } catch (error) {
      setNote(errorText(error));
    }
  }

  async function send(text: string, mode?: Delivery) {
    setNote(undefined);
    if (running && mode) return deliver(text, mode);
    const answer = newId();
    setTurns((all) => [...all, userTurn(newId(), text), answerTurn(answer)]);
    setRunning({ answer });
    try {
      const stream = client.sendMessageStream({ message: text, ...(sessionId ? { session_id: sessionId } : {}) });
      for await (const frame of stream) {
        if (frame.event === "start") {
          setSessionId(frame.data.session_id);
          setRunning({ answer, taskId: frame.data.task_id });
        }
        if (frame.event === "done") setSessionId(frame.data.session_id);
        update(answer, (turn) => applyFrame(turn, frame));
      }
    } catch (error) {
      update(answer, (turn) => ({ ...turn, text: errorText(error), failed: true, done: true }));
    } finally {
      setRunning(undefined);
      void loadSessions();
    }
  }

  async function cancel() {
    if (!running?.taskId) return;
    try {
      await client.cancelTask(running.taskId);
      setNote(t.taskCancelAsked);
    } catch (error) {
      setNote(errorText(error));
    }
  }

  function newSession() {
    setSessionId(undefined);
    setTurns([]);
    setNote(undefined);
  }

  return (
    <div className="chat">
      <SessionList
        sessions={sessions}
        current={sessionId}
        disabled={running !== undefined}
        onOpen={openSession}
        onNew={newSession}
      />
      <div className="chat-main">
        <div className="chat-bar">
          <span>
            {t.session}: <code>{sessionId ?? t.noSession}</code>
          </span>
        </div>
        <ol className="turns" aria-live="polite" aria-label={t.chatConversation}>
          {turns.length === 0 && <li className="empty">{t.chatEmpty}</li>}
          {turns.map((turn) => (
            <ChatTurn key={turn.id} turn={turn} />
          ))}
        </ol>
        {note && <p role="status">{note}</p>}
        <Composer
          running={running !== undefined}
          commands={commands}
          onSlash={() => void loadCommands()}
          onSend={(text, mode) => void send(text, mode)}
          onCancel={() => void cancel()}
        />
      </div>
    </div>
  );
}
