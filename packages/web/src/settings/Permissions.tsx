import type { Decision } from "@assistant/client";
import { type FormEvent, useState } from "react";
import { client } from "../api.ts";
import { Field } from "../Field.tsx";
import { useMessages } from "../i18n.ts";
import { usePoll } from "../usePoll.ts";
import { Outcome, useAct } from "./useAct.tsx";

/** The global approval mode: allow_all is set only after the warning is confirmed. */
export function ApprovalMode() {
  const t = useMessages();
  const mode = usePoll(() => client.getApprovalMode());
  const [confirming, setConfirming] = useState(false);
  const { notice, failure, act } = useAct(mode.refresh);
  const set = (next: "ask_me" | "allow_all") =>
    act(async () => {
      setConfirming(false);
      await client.setApprovalMode({ mode: next });
      return next === "allow_all" ? t.setModeAllowAllSet : t.setModeAskMeSet;
    });
  const current = mode.data?.mode;
  return (
    <section aria-labelledby="set-mode">
      <h2 id="set-mode">{t.setMode}</h2>
      {mode.error && (
        <p role="alert" className="error">
          {mode.error}
        </p>
      )}
      <p data-testid="approval-mode">
        {t.setModeNow}: <strong>{current ? t.setModes[current] : "…"}</strong>
      </p>
      <p className="muted">{t.setModeHelp}</p>
      {current === "ask_me" && !confirming && (
        <button type="button" onClick={() => setConfirming(true)}>
          {t.setModeToAllowAll}
        </button>
      )}
      {current === "allow_all" && (
        <>
          <p className="warning">{t.setModeAllowAllWarning}</p>
          <button type="button" onClick={() => set("ask_me")}>
            {t.setModeToAskMe}
          </button>
        </>
      )}
      {confirming && (
        <fieldset className="confirm">
          <legend>{t.setModeConfirmTitle}</legend>
          <p className="warning">{t.setModeAllowAllWarning}</p>
          <button type="button" className="danger" onClick={() => set("allow_all")}>
            {t.setModeConfirm}
          </button>
          <button type="button" onClick={() => setConfirming(false)}>
            {t.setCancel}
          </button>
        </fieldset>
      )}
      <Outcome notice={notice} failure={failure} />
    </section>
  );
}

/** Persistent allow/deny decisions by tool and scope: list, create, delete. */
export function Decisions() {
  const t = useMessages();
  const list = usePoll(() => client.listDecisions({ limit: 200 }));
  const { notice, failure, act } = useAct(list.refresh);
  const [tool, setTool] = useState("");
  const [scope, setScope] = useState("");
  const [effect, setEffect] = useState<Decision["effect"]>("allow");

  function create(event: FormEvent) {
    event.preventDefault();
    void act(async () => {
      const made = await client.createDecision({ tool: tool.trim(), scope: scope.trim(), effect });
      setTool("");
      setScope("");
      return t.setDecisionCreated(made.tool, made.scope);
    });
  }

  return (
    <section aria-labelledby="set-decisions">
      <h2 id="set-decisions">{t.setDecisions}</h2>
      <p className="muted">{t.setDecisionsHelp}</p>
      {list.error && (
        <p role="alert" className="error">
          {list.error}
        </p>
      )}
      <table className="grid" aria-labelledby="set-decisions">
        <thead>
          <tr>
            <th scope="col">{t.setTool}</th>
            <th scope="col">{t.setScope}</th>
            <th scope="col">{t.setEffect}</th>
            <th scope="col">
              <span className="visually-hidden">{t.setActions}</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {list.data?.items.length === 0 && (
            <tr>
              <td colSpan={4} className="empty">
                {t.setNoDecisions}
              </td>
            </tr>
          )}
          {list.data?.items.map((decision) => (
            <tr key={decision.id}>
              <td>
                <code>{decision.tool}</code>
              </td>
              <td>
                <code>{decision.scope}</code>
              </td>
              <td>{t.setEffects[decision.effect]}</td>
              <td>
                <button
                  type="button"
                  aria-label={`${t.setDelete}: ${decision.tool} ${decision.scope}`}
                  onClick={() =>
                    act(async () => {
                      await client.deleteDecision(decision.id);
                      return t.setDecisionDeleted;
                    })
                  }
                >
                  {t.setDelete}
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <form className="row" onSubmit={create}>
        <Field label={t.setTool}>
          {(id) => <input id={id} value={tool} onChange={(e) => setTool(e.target.value)} placeholder="read_file" />}
        </Field>
        <Field label={t.setScope}>
          {(id) => (
            <input id={id} value={scope} onChange={(e) => setScope(e.target.value)} placeholder="/home/me/notes" />
          )}
        </Field>
        <Field label={t.setEffect}>
          {(id) => (
            <select id={id} value={effect} onChange={(e) => setEffect(e.target.value as Decision["effect"])}>
              <option value="allow">{t.setEffects.allow}</option>
              <option value="deny">{t.setEffects.deny}</option>
            </select>
          )}
        </Field>
        <button type="submit">{t.setAddDecision}</button>
      </form>
      <Outcome notice={notice} failure={failure} />
    </section>
  );
}
