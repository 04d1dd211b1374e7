import { type FormEvent, useState } from "react";
import { client } from "../api.ts";
import { Field } from "../Field.tsx";
import { type Lang, useMessages } from "../i18n.ts";
import type { Theme } from "../preferences.ts";
import { usePoll } from "../usePoll.ts";
import { Outcome, useAct } from "./useAct.tsx";

/**
 * Providers' keys in the vault: the names stored are listed, a value is only ever written (a password field,
 * emptied once sent); the page never reads one back, and the API has no way to.
 */
export function ProviderKeys() {
  const t = useMessages();
  const keys = usePoll(() => client.listVaultKeys({ limit: 200 }));
  const models = usePoll(() => client.listModels(), 60_000);
  const { notice, failure, act } = useAct(keys.refresh);
  const [name, setName] = useState("");
  const [value, setValue] = useState("");
  const suggested = [
    ...new Set(
      (models.data?.providers ?? [])
        .map((p) => p.provider)
        .filter((p) => p !== "assistant_embedded" && p !== "assistant_core")
        .map((p) => `${p}_api_key`),
    ),
  ];

  function store(event: FormEvent) {
    event.preventDefault();
    const key = name.trim();
    void act(async () => {
      setValue(""); // gone from the page whatever the answer
      await client.setVaultSecret({ key, value });
      setName("");
      return t.setKeyStored(key);
    });
  }

  return (
    <section aria-labelledby="set-keys">
      <h2 id="set-keys">{t.setKeys}</h2>
      <p className="muted">{t.setKeysHelp}</p>
      {keys.error && (
        <p role="alert" className="error">
          {keys.error}
        </p>
      )}
      <ul aria-label={t.setKeyNames} className="key-names">
        {keys.data?.items.length === 0 && <li className="empty">{t.setNoKeys}</li>}
        {keys.data?.items.map((item) => (
          <li key={item.key}>
            <code>{item.key}</code>
          </li>
        ))}
      </ul>
      <form className="row" onSubmit={store} autoComplete="off">
        <Field label={t.setKeyName}>
          {(id) => (
            <>
              <input id={id} value={name} list="set-key-suggestions" onChange={(e) => setName(e.target.value)} />
              <datalist id="set-key-suggestions">
                {suggested.map((key) => (
                  <option key={key} value={key} />
                ))}
              </datalist>
            </>
          )}
        </Field>
        <Field label={t.setKeyValue}>
          {(id) => (
            <input
              id={id}
              type="password"
              autoComplete="new-password"
              value={value}
              onChange={(e) => setValue(e.target.value)}
            />
          )}
        </Field>
        <button type="submit" disabled={!name.trim() || !value}>
          {t.setStoreKey}
        </button>
      </form>
      <Outcome notice={notice} failure={failure} />
    </section>
  );
}

/** Memory learning on or paused (the same setting as the Memory tab's). */
export function MemoryLearning() {
  const t = useMessages();
  const settings = usePoll(() => client.getMemorySettings());
  const { notice, failure, act } = useAct(settings.refresh);
  const learning = settings.data?.learning_enabled;
  return (
    <section aria-labelledby="set-learning">
      <h2 id="set-learning">{t.setLearning}</h2>
      <label className="check">
        <input
          type="checkbox"
          checked={learning ?? false}
          disabled={learning === undefined}
          onChange={(e) =>
            act(async () => {
              const next = await client.setMemorySettings({ learning_enabled: e.target.checked });
              return next.learning_enabled ? t.memLearningResumed : t.memLearningWasPaused;
            })
          }
        />{" "}
        {t.setLearningLabel}
      </label>
      <Outcome notice={notice} failure={failure} />
    </section>
  );
}

export interface Appearance {
  lang: Lang;
  setLang: (lang: Lang) => void;
  theme: Theme;
  setTheme: (theme: Theme) => void;
}

/** The shell's own language and theme switches, offered here too (same state, kept in local storage). */
export function AppearanceSettings({ lang, setLang, theme, setTheme }: Appearance) {
  const t = useMessages();
  return (
    <section aria-labelledby="set-appearance">
      <h2 id="set-appearance">{t.setAppearance}</h2>
      <div className="row">
        <Field label={t.setLanguageLabel}>
          {(id) => (
            <select id={id} value={lang} onChange={(e) => setLang(e.target.value as Lang)}>
              <option value="en">English</option>
              <option value="fr">Français</option>
            </select>
          )}
        </Field>
        <Field label={t.setThemeLabel}>
          {(id) => (
            <select id={id} value={theme} onChange={(e) => setTheme(e.target.value as Theme)}>
              <option value="system">{t.themeSystem}</option>
              <option value="light">{t.themeLight}</option>
              <option value="dark">{t.themeDark}</option>
            </select>
          )}
        </Field>
      </div>
    </section>
  );
}
