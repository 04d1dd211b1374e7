import { ApiError } from "@assistant/client";
import { type FormEvent, useEffect, useState } from "react";
import { client } from "../api.ts";
import { Field } from "../Field.tsx";
import { useMessages } from "../i18n.ts";
import { errorText, usePoll } from "../usePoll.ts";
import { Outcome, useAct } from "./useAct.tsx";

/** The policy in force per tool (with the rule that decides) and tools_policy.yaml edited as text. */
export function ToolsPolicy() {
  const t = useMessages();
  const effective = usePoll(() => client.getEffectiveTools());
  const view = effective.data;
  return (
    <section aria-labelledby="set-policy">
      <h2 id="set-policy">{t.setPolicy}</h2>
      {effective.error && (
        <p role="alert" className="error">
          {effective.error}
        </p>
      )}
      {view && (
        <>
          <p className="muted">
            {view.policy_file} · {t.setPolicyStatus[view.policy_status]}
            {view.problem ? ` · ${view.problem}` : ""}
          </p>
          <table className="grid" aria-label={t.setEffective}>
            <thead>
              <tr>
                <th scope="col">{t.setTool}</th>
                <th scope="col">{t.setToolStatus}</th>
                <th scope="col">{t.setRule}</th>
              </tr>
            </thead>
            <tbody>
              {view.tools.map((tool) => (
                <tr key={tool.name} data-testid={`effective-${tool.name}`}>
                  <td>
                    <code>{tool.name}</code>
                  </td>
                  <td className={`tool-${tool.status}`}>{t.setToolStatuses[tool.status]}</td>
                  <td>
                    {tool.rule}
                    {tool.source ? <span className="muted"> ({tool.source})</span> : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
      <PolicyEditor onSaved={effective.refresh} />
    </section>
  );
}

function PolicyEditor({ onSaved }: { onSaved: () => Promise<void> }) {
  const t = useMessages();
  const [yaml, setYaml] = useState<string>();
  const [where, setWhere] = useState<string>();
  const { notice, failure, act } = useAct(onSaved);
  const [loadError, setLoadError] = useState<string>();

  useEffect(() => {
    client.getToolsPolicy().then(
      (text) => setYaml(text.yaml),
      (error: unknown) => setLoadError(errorText(error)),
    );
  }, []);

  function save(event: FormEvent) {
    event.preventDefault();
    if (yaml === undefined) return;
    setWhere(undefined);
    void act(async () => {
      try {
        const saved = await client.putToolsPolicy({ yaml });
        setYaml(saved.yaml);
        return t.setPolicySaved;
      } catch (error) {
        // The key or line the daemon names, shown next to the editor.
        if (error instanceof ApiError && typeof error.details?.key === "string") setWhere(error.details.key);
        throw error;
      }
    });
  }

  return (
    <form className="stack" onSubmit={save}>
      <h3>{t.setPolicyEditor}</h3>
      <p className="muted">{t.setPolicyEditorHelp}</p>
      {loadError && (
        <p role="alert" className="error">
          {loadError}
        </p>
      )}
      {yaml !== undefined && (
        <Field label={t.setPolicyYaml}>
          {(id) => (
            <textarea
              id={id}
              className="code"
              rows={14}
              spellCheck={false}
              value={yaml}
              aria-invalid={failure ? true : undefined}
              onChange={(e) => setYaml(e.target.value)}
            />
          )}
        </Field>
      )}
      {where && <p className="field-error">{t.setPolicyWhere(where)}</p>}
      <div>
        <button type="submit">{t.setSavePolicy}</button>
      </div>
      <Outcome notice={notice} failure={failure} />
    </form>
  );
}
