import type { ModelMetrics } from "@assistant/client";
import { client } from "../api.ts";
import { useMessages } from "../i18n.ts";
import { usePoll } from "../usePoll.ts";

/**
 * Calls, failures, latency p50/p95, tokens and cost per provider and model since the daemon started, with the
 * p95 latency as a small bar (SVG attributes, so the strict CSP allows it) for comparing providers at a glance.
 */
export function MetricsTable() {
  const t = useMessages();
  const metrics = usePoll(() => client.getRouterMetrics());
  const data = metrics.data;
  const slowest = Math.max(1, ...(data?.models ?? []).map((m) => m.latency_ms.p95 ?? 0));
  return (
    <section aria-labelledby="rt-metrics">
      <h2 id="rt-metrics">{t.rtMetrics}</h2>
      {metrics.error && (
        <p role="alert" className="error">
          {metrics.error}
        </p>
      )}
      {data && !data.enabled && <p className="muted">{t.rtMetricsOff}</p>}
      {data && (
        <p className="muted" data-testid="metrics-totals">
          {t.rtTotals(data.totals.calls, data.totals.failures, data.totals.tokens_in + data.totals.tokens_out)} ·{" "}
          {usd(data.totals.cost_usd)} · {t.rtSince} {new Date(data.since).toLocaleString()}
        </p>
      )}
      <div className="table-wrap">
        <table aria-label={t.rtMetrics}>
          <thead>
            <tr>
              <th scope="col">{t.rtModel}</th>
              <th scope="col">{t.rtCalls}</th>
              <th scope="col">{t.rtFailures}</th>
              <th scope="col">{t.rtLatency}</th>
              <th scope="col">{t.rtTokens}</th>
              <th scope="col">{t.rtCost}</th>
            </tr>
          </thead>
          <tbody>
            {data?.models.length === 0 && (
              <tr>
                <td colSpan={6} className="empty">
                  {t.rtNoCalls}
                </td>
              </tr>
            )}
            {data?.models.map((row) => (
              <MetricsRow key={`${row.provider}/${row.model}`} row={row} slowest={slowest} />
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function MetricsRow({ row, slowest }: { row: ModelMetrics; slowest: number }) {
  const t = useMessages();
  const { p50, p95 } = row.latency_ms;
  return (
    <tr data-testid={`metrics-${row.provider}/${row.model}`}>
      <th scope="row">
        <code>
          {row.provider}/{row.model}
        </code>
      </th>
      <td>{row.calls}</td>
      <td className={row.failures > 0 ? "error" : undefined} title={row.last_error ?? undefined}>
        {row.failures}
      </td>
      <td>
        {ms(p50)} / {ms(p95)}
        {p95 !== null && (
          <svg className="bar" width="80" height="6" role="img" aria-label={`${t.rtP95} ${ms(p95)}`}>
            <rect width={Math.max(2, (80 * p95) / slowest)} height="6" />
          </svg>
        )}
      </td>
      <td>
        {row.tokens_in} / {row.tokens_out}
      </td>
      <td>{usd(row.cost_usd)}</td>
    </tr>
  );
}

const ms = (value: number | null) => (value === null ? "—" : `${Math.round(value)} ms`);
const usd = (value: number) => `$${value.toFixed(value < 1 ? 4 : 2)}`;
