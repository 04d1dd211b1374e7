import type { BudgetStatus } from "@assistant/client";
import { type FormEvent, useState } from "react";
import { client } from "../api.ts";
import { Field } from "../Field.tsx";
import { useMessages } from "../i18n.ts";
import { errorText, usePoll } from "../usePoll.ts";

/** Session limits (tokens, cost) with where each comes from, usage per session, set limits, reset usage. */
export function BudgetPanel() {
  const t = useMessages();
  const budget = usePoll(() => client.getBudget());
  const [notice, setNotice] = useState<string>();
  const [failure, setFailure] = useState<string>();

  async function act(run: () => Promise<string>) {
    setFailure(undefined);
    setNotice(undefined);
    try {
      setNotice(await run());
    } catch (error) {
      setFailure(errorText(error));
    }
    await budget.refresh();
  }

  const data = budget.data;
  return (
    <section aria-labelledby="rt-budget">
      <h2 id="rt-budget">{t.rtBudget}</h2>
      {budget.error && (
        <p role="alert" className="error">
          {budget.error}
        </p>
      )}
      {data && <LimitsForm status={data} act={act} />}
      <p role="status" className="notice-line">
        {notice}
      </p>
      {failure && (
        <p role="alert" className="error">
          {failure}
        </p>
      )}
      {data && (
        <>
          <h3>{t.rtUsage}</h3>
          <div className="table-wrap">
            <table aria-label={t.rtUsage}>
              <thead>
                <tr>
                  <th scope="col">{t.rtSession}</th>
                  <th scope="col">{t.rtTokens}</th>
                  <th scope="col">{t.rtCost}</th>
                  <th scope="col">
                    <span className="visually-hidden">{t.rtActions}</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {data.sessions.length === 0 && (
                  <tr>
                    <td colSpan={4} className="empty">
                      {t.rtNoUsage}
                    </td>
                  </tr>
                )}
                {data.sessions.map((session) => (
                  <tr key={session.session_id}>
                    <th scope="row">
                      <code>{session.session_id}</code>
                    </th>
                    <td>
                      {session.tokens_in} / {session.tokens_out}
                    </td>
                    <td>${session.cost_usd.toFixed(4)}</td>
                    <td>
                      <button
                        type="button"
                        aria-label={t.rtResetSession(session.session_id)}
                        onClick={() =>
                          act(async () => {
                            await client.resetBudgetUsage({ session_id: session.session_id });
                            return t.rtUsageReset(1);
                          })
                        }
                      >
                        {t.rtReset}
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <button
            type="button"
            disabled={data.sessions.length === 0}
            onClick={() => act(async () => t.rtUsageReset((await client.resetBudgetUsage({})).reset))}
          >
            {t.rtResetAll}
          </button>
        </>
      )}
    </section>
  );
}

function LimitsForm({ status, act }: { status: BudgetStatus; act: (run: () => Promise<string>) => Promise<void> }) {
  const t = useMessages();
  // Only a limit set here is in its field: saving must not pin the environment's value as the API's.
  const own = (key: keyof BudgetStatus["limits"]) =>
    status.sources[key] === "api" ? (status.limits[key]?.toString() ?? "") : "";
  const placeholder = (key: keyof BudgetStatus["limits"]) => status.limits[key]?.toString() ?? t.rtNoLimit;
  const [tokens, setTokens] = useState(own("max_tokens_per_session"));
  const [cost, setCost] = useState(own("max_cost_per_session_usd"));
  const [error, setError] = useState<string>();

  function save(event: FormEvent) {
    event.preventDefault();
    const maxTokens = parseLimit(tokens);
    const maxCost = parseLimit(cost);
    if (Number.isNaN(maxTokens) || Number.isNaN(maxCost)) {
      setError(t.rtLimitNotNumber);
      return;
    }
    setError(undefined);
    // An empty field clears the limit set here (the environment's applies again).
    void act(async () => {
      await client.setBudgetLimits({ max_tokens_per_session: maxTokens, max_cost_per_session_usd: maxCost });
      return t.rtLimitsSaved;
    });
  }

  return (
    <form className="stack" onSubmit={save}>
      <div className="row">
        <Field label={t.rtMaxTokens}>
          {(id) => (
            <input
              id={id}
              inputMode="numeric"
              placeholder={placeholder("max_tokens_per_session")}
              value={tokens}
              onChange={(e) => setTokens(e.target.value)}
            />
          )}
        </Field>
        <span className="muted">{t.rtLimitSource[status.sources.max_tokens_per_session]}</span>
      </div>
      <div className="row">
        <Field label={t.rtMaxCost}>
          {(id) => (
            <input
              id={id}
              inputMode="decimal"
              placeholder={placeholder("max_cost_per_session_usd")}
              value={cost}
              onChange={(e) => setCost(e.target.value)}
            />
          )}
        </Field>
        <span className="muted">{t.rtLimitSource[status.sources.max_cost_per_session_usd]}</span>
      </div>
      <p className="muted">{t.rtLimitsHelp}</p>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <div>
        <button type="submit">{t.rtSaveLimits}</button>
      </div>
    </form>
  );
}

/** null for an empty field (no limit), NaN for text that is no number; the daemon checks the range. */
function parseLimit(text: string): number | null {
  const trimmed = text.trim();
  if (trimmed === "") return null;
  const value = Number(trimmed);
  return Number.isFinite(value) ? value : Number.NaN;
}
