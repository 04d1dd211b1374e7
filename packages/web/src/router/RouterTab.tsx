import type { ProviderModels } from "@assistant/client";
import { client } from "../api.ts";
import { useMessages } from "../i18n.ts";
import { usePoll } from "../usePoll.ts";
import { BudgetPanel } from "./BudgetPanel.tsx";
import { EmbeddedPanel } from "./EmbeddedPanel.tsx";
import { MetricsTable } from "./MetricsTable.tsx";
import { RoutesTable } from "./RoutesTable.tsx";

/** The model router: routes per category, providers and models, metrics, the embedded model, the budget. */
export function RouterTab() {
  const t = useMessages();
  // The model lists ask every provider: slower and rarer than the other polls.
  const models = usePoll(() => client.listModels(), 30_000);
  const providers = models.data?.providers ?? [];
  return (
    <div className="tab router">
      <h1>{t.rtTitle}</h1>
      <RoutesTable providers={providers} />
      <Providers providers={providers} error={models.error} />
      <MetricsTable />
      <EmbeddedPanel />
      <BudgetPanel />
    </div>
  );
}

function Providers({ providers, error }: { providers: ProviderModels[]; error: string | undefined }) {
  const t = useMessages();
  return (
    <section aria-labelledby="rt-providers">
      <h2 id="rt-providers">{t.rtProviders}</h2>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <ul className="providers" aria-label={t.rtProviders}>
        {providers.map((entry) => (
          <li key={entry.provider} data-testid={`provider-${entry.provider}`}>
            <strong>{entry.provider}</strong>{" "}
            {entry.error ? (
              <span className="error">
                {t.rtUnreachable}: {entry.error}
              </span>
            ) : (
              <span className="ok">{t.rtReachable}</span>
            )}
            {entry.models.length > 0 && (
              <details>
                <summary>{t.rtModels(entry.models.length)}</summary>
                <ul className="model-list">
                  {entry.models.map((model) => (
                    <li key={model.model}>
                      <code>{model.model}</code>
                      {modelNote(model.options)}
                    </li>
                  ))}
                </ul>
              </details>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}

function modelNote(options: ProviderModels["models"][number]["options"]): string {
  const parts = [options.family, options.parameter_size, options.capabilities?.join(", ")].filter(Boolean);
  return parts.length ? ` (${parts.join(" · ")})` : "";
}
