import { createRequire } from "node:module";
import type { Command } from "commander";
import type { DownloadProgress } from "../llm/embedded/download.ts";
import { AppError } from "../util/errors.ts";
import { type CliContext, output } from "./context.ts";

// `assistant config models embedded-download`: fetches the embedded model's GGUF straight into the models folder
// of the data directory, without a daemon, through the same resumable, sha256-verified download the daemon uses.
// The progress goes to stderr (a bar on a terminal, a line per 10% otherwise) so stdout keeps the result.

interface Bar {
  start(total: number, value: number, payload: Record<string, string>): void;
  update(value: number, payload: Record<string, string>): void;
  stop(): void;
}
interface CliProgress {
  SingleBar: new (options: Record<string, unknown>, preset: unknown) => Bar;
  Presets: { shades_classic: unknown };
}

export function registerEmbeddedDownload(models: Command, ctx: CliContext): void {
  models
    .command("embedded-download")
    .description(
      "download the embedded model (GGUF) into the models folder; resumes an interrupted download and verifies its sha256",
    )
    .option("--model <id>", "catalogue id to download (default: ASSISTANT_EMBEDDED_MODEL, else qwen3_0_6b)")
    .option("--json", "machine-readable output (the final progress object)")
    .action(async (opts: { model?: string; json?: boolean }) => {
      const [{ readSettingsOf }, { EMBEDDED_MODEL_SETTINGS }, { resolveEmbeddedModel }, catalogue, download] =
        await Promise.all([
          import("../config/settings.ts"),
          import("../llm/settings.ts"),
          import("../llm/embedded/catalogue.ts"),
          import("../llm/embedded/catalogueEntries.ts"),
          import("../llm/embedded/download.ts"),
        ]);
      const { downloadModel, downloadTarget } = download;
      const settings = readSettingsOf(ctx.env, EMBEDDED_MODEL_SETTINGS);
      if (settings.embeddedModelPath && !opts.model) {
        throw new AppError(
          "invalid_request",
          `ASSISTANT_EMBEDDED_MODEL_PATH is set, so the embedded model is the local file ${settings.embeddedModelPath} and there is nothing to download; pass --model <id> to download a catalogue model anyway`,
        );
      }
      if (opts.model && !catalogue.catalogueEntry(opts.model)) {
        throw new AppError(
          "invalid_request",
          `--model ${opts.model} is not in the embedded catalogue; known ids: ${catalogue.EMBEDDED_CATALOGUE.map((e) => e.id).join(", ")}`,
          { field: "model" },
        );
      }
      const chosen = opts.model ? { ...settings, embeddedModel: opts.model, embeddedModelPath: undefined } : settings;
      const target = downloadTarget(resolveEmbeddedModel(chosen, ctx.paths));

      const interactive = (ctx.stderr as { isTTY?: boolean }).isTTY === true;
      const report = interactive ? barReporter(ctx) : lineReporter(ctx, target.model_id);
      const controller = new AbortController();
      const onSigint = () => controller.abort(new Error("interrupted"));
      process.once("SIGINT", onSigint); // stop cleanly: the lock is released and the .part kept for a resume
      let outcome: Awaited<ReturnType<typeof downloadModel>>;
      try {
        // Every chunk is reported: the bar and the 10% lines do their own throttling.
        outcome = await downloadModel(target, {
          signal: controller.signal,
          onProgress: report.update,
          progressIntervalMs: 0,
        });
      } finally {
        process.off("SIGINT", onSigint);
        report.stop();
      }
      output(ctx, opts.json, outcome, () => {
        const size = mib(outcome.bytes_done);
        return outcome.already_present
          ? `${target.model_id} is already downloaded and verified: ${target.path} (${size}, sha256 ${target.sha256})`
          : `downloaded ${target.model_id} to ${target.path} (${size}); sha256 verified (${target.sha256})`;
      });
    });
}

interface Reporter {
  update(progress: DownloadProgress): void;
  stop(): void;
}

function barReporter(ctx: CliContext): Reporter {
  // cli-progress ships no type declarations; it is loaded through require with the small interface above.
  const { SingleBar, Presets } = createRequire(import.meta.url)("cli-progress") as CliProgress;
  const bar = new SingleBar(
    { stream: ctx.stderr, format: "{bar} {percentage}% | {done} of {size} | {speed} | {status}", hideCursor: true },
    Presets.shades_classic,
  );
  let started = false;
  const payload = (p: DownloadProgress) => ({
    done: mib(p.bytes_done),
    size: p.bytes_total !== null ? mib(p.bytes_total) : "?",
    speed: `${(p.speed_bps / 1e6).toFixed(1)} MB/s`,
    status: p.status,
  });
  return {
    update(progress) {
      const total = progress.bytes_total ?? Math.max(progress.bytes_done, 1);
      if (!started) {
        bar.start(total, progress.bytes_done, payload(progress));
        started = true;
      } else bar.update(progress.bytes_done, payload(progress));
    },
    stop() {
      if (started) bar.stop();
    },
  };
}

function lineReporter(ctx: CliContext, modelId: string): Reporter {
  let lastTenth = -1;
  let verifying = false;
  return {
    update(progress) {
      if (progress.status === "verifying" && !verifying) {
        verifying = true;
        ctx.stderr.write(`verifying ${modelId} (${mib(progress.bytes_done)})\n`);
      }
      if (progress.status !== "running" || progress.percent === null) return;
      verifying = false;
      const tenth = Math.floor(progress.percent / 10);
      if (tenth <= lastTenth) return;
      lastTenth = tenth;
      ctx.stderr.write(
        `downloading ${modelId}: ${tenth * 10}% (${mib(progress.bytes_done)} of ${mib(progress.bytes_total ?? 0)}, ${(progress.speed_bps / 1e6).toFixed(1)} MB/s)\n`,
      );
    },
    stop() {},
  };
}

function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
