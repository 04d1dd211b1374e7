import type { ProviderModels, RouteTarget, RouteView } from "@assistant/client";
import { type FormEvent, useState } from "react";
import { client } from "../api.ts";
import { Field } from "../Field.tsx";
import { useMessages } from "../i18n.ts";
import { errorText, usePoll } from "../usePoll.ts";

type Provider = RouteTarget["provider"];

// Every provider a route may name (the daemon's list): a Record so the compiler says when the API adds one.
const PROVIDERS = Object.keys({
  assistant_embedded: true,
  assistant_core: true,
  local_server: true,
  lowbit_server: true,
  cloud_a: true,
  cloud_azure: true,
  cloud_b: true,
} satisfies Record<Provider, true>) as Provider[];

const label = (target: RouteTarget) => `${target.provider}/${target.model}`;

/**
 * Routes per category with primary and fallbacks. Editing sets the primary through the API
 * (PUT /api/router/routes/{category}): the previous primary becomes the first fallback, saved to llm_router.yaml.
 */
export function RoutesTable({ providers }: { providers: ProviderModels[] }) {
  const t = useMessages();
  const routes = usePoll(() => client.listRouterRoutes());
  const [editing, setEditing] = useState<string>();
  const [notice, setNotice] = useState<string>();
  return (
    <section aria-labelledby="rt-routes">
      <h2 id="rt-routes">{t.rtRoutes}</h2>
      {routes.error && (
        <p role="alert" className="error">
          {routes.error}
        </p>
      )}
      <p role="status" className="notice-line">
        {notice}
      </p>
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">{t.rtCategory}</th>
              <th scope="col">{t.rtPrimary}</th>
              <th scope="col">{t.rtFallbacks}</th>
              <th scope="col">{t.rtSource}</th>
              <th scope="col">
                <span className="visually-hidden">{t.rtActions}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {routes.data?.items.map((route) =>
              editing === route.category ? (
                <RouteEditor
                  key={route.category}
                  route={route}
                  providers={providers}
                  onDone={(saved) => {
                    setEditing(undefined);
                    if (saved) setNotice(t.rtSaved(saved.category, label(saved.primary!), saved.file));
                    void routes.refresh();
                  }}
                />
              ) : (
                <tr key={route.category} data-testid={`route-${route.category}`}>
                  <th scope="row">{route.category}</th>
                  <td>{route.primary ? <code>{label(route.primary)}</code> : t.rtNone}</td>
                  <td>{route.fallback.map(label).join(", ") || "—"}</td>
                  <td>{route.source === "file" ? t.rtFromFile : t.rtInherited}</td>
                  <td>
                    <button
                      type="button"
                      aria-label={t.rtEditFor(route.category)}
                      onClick={() => {
                        setNotice(undefined);
                        setEditing(route.category);
                      }}
                    >
                      {t.rtEdit}
                    </button>
                  </td>
                </tr>
              ),
            )}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function RouteEditor(props: {
  route: RouteView;
  providers: ProviderModels[];
  onDone: (saved?: { category: string; primary: RouteTarget | null; file: string }) => void;
}) {
  const t = useMessages();
  const { route } = props;
  const [provider, setProvider] = useState<Provider>(route.primary?.provider ?? "lowbit_server");
  const [model, setModel] = useState(route.primary?.model ?? "");
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const known = props.providers.find((entry) => entry.provider === provider)?.models ?? [];
  const listId = `models-${route.category}`;

  async function save(event: FormEvent) {
    event.preventDefault();
    if (!model.trim()) {
      setError(t.rtModelRequired);
      return;
    }
    setBusy(true);
    try {
      props.onDone(await client.setRouterRoute(route.category, { provider, model: model.trim() }));
    } catch (failure) {
      setError(errorText(failure));
    } finally {
      setBusy(false);
    }
  }

  return (
    <tr className="editing" data-testid={`route-${route.category}`}>
      <th scope="row">{route.category}</th>
      <td colSpan={4}>
        <form className="row" onSubmit={save} aria-label={t.rtEditFor(route.category)}>
          <Field label={t.rtProvider}>
            {(id) => (
              <select id={id} value={provider} onChange={(e) => setProvider(e.target.value as Provider)}>
                {PROVIDERS.map((name) => (
                  <option key={name} value={name}>
                    {name}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label={t.rtModel}>
            {(id) => (
              <input
                id={id}
                value={model}
                list={listId}
                onChange={(e) => setModel(e.target.value)}
                autoComplete="off"
              />
            )}
          </Field>
          <datalist id={listId}>
            {known.map((entry) => (
              <option key={entry.model} value={entry.model} />
            ))}
          </datalist>
          <button type="submit" disabled={busy}>
            {t.rtSave}
          </button>
          <button type="button" onClick={() => props.onDone()}>
            {t.rtCancel}
          </button>
        </form>
        <p className="muted">{t.rtEditHelp}</p>
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
      </td>
    </tr>
  );
}
