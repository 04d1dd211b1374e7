import { useState } from "react";
import { useMessages } from "../i18n.ts";
import { completions, type SlashCommand } from "./slashCommands.ts";

export type Delivery = "steering" | "follow_up";

/**
 * The message field. While a task runs, a line is delivered to it as steering (read after the current model turn)
 * or a follow-up (run after it), and Cancel stops it. A line starting with "/" offers the daemon's commands:
 * arrows pick, Tab completes.
 */
export function Composer({
  running,
  commands,
  onSlash,
  onSend,
  onCancel,
}: {
  running: boolean;
  commands: SlashCommand[];
  /** The first "/" typed: the commands are loaded then. */
  onSlash: () => void;
  onSend: (text: string, delivery?: Delivery) => void;
  onCancel: () => void;
}) {
  const t = useMessages();
  const [draft, setDraft] = useState("");
  const [delivery, setDelivery] = useState<Delivery>("steering");
  const [picked, setPicked] = useState(0);
  const offered = completions(commands, draft);
  const choice = offered[Math.min(picked, offered.length - 1)];

  function send() {
    const text = draft.trim();
    if (!text) return;
    setDraft("");
    onSend(text, running ? delivery : undefined);
  }

  function complete(command: SlashCommand) {
    setDraft(`${command.name} `);
    setPicked(0);
  }

  return (
    <form
      className="composer"
      onSubmit={(event) => {
        event.preventDefault();
        send();
      }}
    >
      {offered.length > 0 && (
        <div className="slash-list" id="slash-list" role="listbox" aria-label={t.chatCommands}>
          {offered.map((command) => (
            <div
              key={command.usage}
              role="option"
              aria-selected={command === choice}
              tabIndex={-1}
              onMouseDown={(event) => {
                event.preventDefault();
                complete(command);
              }}
            >
              <code>{command.usage}</code> <span className="muted">{command.summary}</span>
            </div>
          ))}
        </div>
      )}
      <label htmlFor="message" className="visually-hidden">
        {t.message}
      </label>
      <textarea
        id="message"
        rows={2}
        value={draft}
        aria-autocomplete="list"
        aria-controls={offered.length > 0 ? "slash-list" : undefined}
        onChange={(e) => {
          if (e.target.value.startsWith("/")) onSlash();
          setDraft(e.target.value);
          setPicked(0);
        }}
        onKeyDown={(e) => {
          if (choice && (e.key === "ArrowDown" || e.key === "ArrowUp")) {
            e.preventDefault();
            const step = e.key === "ArrowDown" ? 1 : offered.length - 1;
            setPicked((offered.indexOf(choice) + step) % offered.length);
          } else if (choice && e.key === "Tab") {
            e.preventDefault();
            complete(choice);
          } else if (e.key === "Enter" && !e.shiftKey) {
            e.preventDefault();
            send();
          }
        }}
      />
      {running && (
        <label className="delivery">
          {t.chatDeliver}{" "}
          <select value={delivery} onChange={(e) => setDelivery(e.target.value as Delivery)}>
            <option value="steering">{t.chatSteering}</option>
            <option value="follow_up">{t.chatFollowUp}</option>
          </select>
        </label>
      )}
      <button type="submit" disabled={!draft.trim()}>
        {running ? t.chatDeliverSend : t.send}
      </button>
      {running && (
        <button type="button" className="danger" onClick={onCancel}>
          {t.chatCancel}
        </button>
      )}
    </form>
  );
}
