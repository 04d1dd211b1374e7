import type { DownloadProgress } from "@assistant/client";
import { useId, useState } from "react";
import { client } from "../api.ts";
import { useMessages } from "../i18n.ts";
import { errorText, usePoll } from "../usePoll.ts";

/** The embedded model: state, threads and calibration, the download with its progress, reload, calibrate. */
export function EmbeddedPanel() {
  const t = useMessages();
  const state = usePoll(() => client.getEmbeddedModel());
  const [downloading, setDownloading] = useState(false);
  // Every second while a download runs, so the bar moves; every few seconds otherwise.
  const download = usePoll(() => client.getEmbeddedDownload(), downloading ? 1_000 : 5_000);
  const [busy, setBusy] = useState<"reload" | "calibrate" | "download">();
  const [notice, setNotice] = useState<string>();
  const [failure, setFailure] = useState<string>();
  const running = download.data?.status === "running" || download.data?.status === "verifying";
  if (running !== downloading) setDownloading(running);

  async function act(which: "reload" | "calibrate" | "download", run: () => Promise<string>) {
    setBusy(which);
    setFailure(undefined);
    setNotice(undefined);
    try {
      setNotice(await run());
    } catch (error) {
      setFailure(errorText(error));
    } finally {
      setBusy(undefined);
      await Promise.all([state.refresh(), download.refresh()]);
    }
  }

  const model = state.data;
  const calibration = model?.calibration;
  return (
    <section aria-labelledby="rt-embedded">
      <h2 id="rt-embedded">{t.rtEmbedded}</h2>
      {(state.error ?? download.error) && (
        <p role="alert" className="error">
          {state.error ?? download.error}
        </p>
      )}
      {model && (
        <dl className="facts" data-testid="embedded-state">
          <dt>{t.rtState}</dt>
          <dd>{model.status}</dd>
          <dt>{t.rtModel}</dt>
          <dd>
            <code>{model.model_id}</code> {model.file_present ? "" : `(${t.rtNotDownloaded})`}
          </dd>
          <dt>{t.rtThreads}</dt>
          <dd>
            {model.threads} ({t.rtThreadsSource[model.threads_source]}) · {t.rtContext} {model.context_size}
            {model.gpu ? ` · GPU ${model.gpu} (${model.gpu_layers})` : ""}
          </dd>
          <dt>{t.rtCalibration}</dt>
          <dd>
            {calibration
              ? t.rtCalibrated(
                  calibration.tokens_per_second.toFixed(1),
                  calibration.threads,
                  new Date(calibration.measured_at).toLocaleString(),
                )
              : t.rtNotCalibrated}
          </dd>
          {model.error && (
            <>
              <dt>{t.rtError}</dt>
              <dd className="error">{model.error}</dd>
            </>
          )}
        </dl>
      )}
      {download.data && <DownloadBar progress={download.data} />}
      <div className="row">
        <button
          type="button"
          disabled={busy !== undefined || running}
          onClick={() =>
            act("download", async () => {
              await client.startEmbeddedDownload();
              return t.rtDownloadStarted;
            })
          }
        >
          {t.rtDownload}
        </button>
        <button
          type="button"
          disabled={busy !== undefined}
          onClick={() =>
            act("reload", async () => {
              await client.reloadEmbeddedModel();
              return t.rtReloaded;
            })
          }
        >
          {t.rtReload}
        </button>
        <button
          type="button"
          disabled={busy !== undefined}
          onClick={() =>
            act("calibrate", async () => {
              const result = await client.calibrateEmbeddedModel();
              return t.rtCalibrated(result.tokens_per_second.toFixed(1), result.threads, t.rtNow);
            })
          }
        >
          {busy === "calibrate" ? t.rtCalibrating : t.rtCalibrate}
        </button>
      </div>
      <p role="status" className="notice-line">
        {notice}
      </p>
      {failure && (
        <p role="alert" className="error">
          {failure}
        </p>
      )}
    </section>
  );
}

function DownloadBar({ progress }: { progress: DownloadProgress }) {
  const t = useMessages();
  const labelId = useId();
  const done = `${mb(progress.bytes_done)}${progress.bytes_total ? ` / ${mb(progress.bytes_total)}` : ""}`;
  return (
    <div className="download" data-testid="embedded-download">
      <span id={labelId}>
        {t.rtDownloadLabel}: {t.rtDownloadStatus[progress.status]}
        {progress.status !== "idle" && ` · ${done}`}
        {progress.status === "running" && progress.speed_bps > 0 && ` · ${mb(progress.speed_bps)}/s`}
      </span>{" "}
      <progress
        aria-labelledby={labelId}
        max={100}
        value={progress.percent ?? (progress.status === "completed" ? 100 : 0)}
        aria-valuetext={progress.percent === null ? undefined : `${Math.round(progress.percent)}%`}
      />
      {progress.error && <p className="error">{progress.error}</p>}
    </div>
  );
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
