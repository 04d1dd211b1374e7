import type { AgentProfile } from "@assistant/client";
import { type FormEvent, useEffect, useState } from "react";
import { client } from "../api.ts";
import { Field } from "../Field.tsx";
import { useMessages } from "../i18n.ts";
import { errorText } from "../usePoll.ts";
import { Outcome, useAct } from "./useAct.tsx";

const FORMALITIES = ["default", "formal", "informal"] as const;

/** agent_profile.json through GET/PUT /api/settings/agent-profile: the next prompt uses what is saved. */
export function ProfileForm() {
  const t = useMessages();
  const [profile, setProfile] = useState<AgentProfile>();
  const [rules, setRules] = useState("");
  const [loadError, setLoadError] = useState<string>();
  const { notice, failure, act } = useAct();

  useEffect(() => {
    client.getAgentProfile().then(
      (loaded) => {
        setProfile(loaded);
        setRules(loaded.rules.join("\n"));
      },
      (error: unknown) => setLoadError(errorText(error)),
    );
  }, []);

  function save(event: FormEvent) {
    event.preventDefault();
    if (!profile) return;
    void act(async () => {
      const saved = await client.putAgentProfile({
        ...profile,
        rules: rules
          .split("\n")
          .map((rule) => rule.trim())
          .filter(Boolean),
      });
      setProfile(saved);
      setRules(saved.rules.join("\n"));
      return t.setProfileSaved;
    });
  }

  const set = (key: "name" | "role" | "personality") => (value: string) =>
    setProfile((current) => current && { ...current, [key]: value });
  return (
    <section aria-labelledby="set-profile">
      <h2 id="set-profile">{t.setProfile}</h2>
      <p className="muted">{t.setProfileHelp}</p>
      {loadError && (
        <p role="alert" className="error">
          {loadError}
        </p>
      )}
      {profile && (
        <form className="stack" onSubmit={save}>
          <div className="row">
            <Field label={t.setName}>
              {(id) => <input id={id} value={profile.name} onChange={(e) => set("name")(e.target.value)} />}
            </Field>
            <Field label={t.setRole}>
              {(id) => <input id={id} value={profile.role} onChange={(e) => set("role")(e.target.value)} />}
            </Field>
            <Field label={t.setFormality}>
              {(id) => (
                <select
                  id={id}
                  value={profile.formality}
                  onChange={(e) => setProfile({ ...profile, formality: e.target.value as AgentProfile["formality"] })}
                >
                  {FORMALITIES.map((f) => (
                    <option key={f} value={f}>
                      {t.setFormalities[f]}
                    </option>
                  ))}
                </select>
              )}
            </Field>
          </div>
          <Field label={t.setPersonality}>
            {(id) => (
              <textarea
                id={id}
                rows={2}
                value={profile.personality}
                onChange={(e) => set("personality")(e.target.value)}
              />
            )}
          </Field>
          <Field label={t.setRules}>
            {(id) => <textarea id={id} rows={3} value={rules} onChange={(e) => setRules(e.target.value)} />}
          </Field>
          <div>
            <button type="submit">{t.setSaveProfile}</button>
          </div>
        </form>
      )}
      <Outcome notice={notice} failure={failure} />
    </section>
  );
}
