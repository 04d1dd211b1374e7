import { Transform } from "node:stream";
import type { Worker } from "node:worker_threads";

// The plugin SDK imports node:wasi (even with WASI off), in the daemon when it is loaded and in every plugin
// worker, so Node printed "ExperimentalWarning: WASI is an experimental feature..." each time: under the
// supervisor, ERROR lines in the log on every start and the first words of the message when a start failed. This
// drops that one warning while a plugin loads (the SDK's import, its worker's stderr); anything else passes, and
// warnings outside a plugin load are untouched.

const WASI_WARNING = /^\(node:\d+\) ExperimentalWarning: WASI is an experimental feature/;
const TRACE_HINT = "(Use `node --trace-warnings ...` to show where the warning was created)";

/** Line by line: the WASI warning and the trace hint right after it go; other lines pass unchanged. */
export function wasiWarningFilter(): Transform {
  let partial = "";
  let dropped = false;
  const keep = (line: string): boolean => {
    const drop = WASI_WARNING.test(line) || (dropped && line === TRACE_HINT);
    dropped = WASI_WARNING.test(line);
    return !drop;
  };
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const lines = (partial + chunk.toString("utf8")).split("\n");
      partial = lines.pop()!;
      const kept = lines.filter(keep);
      done(null, kept.length > 0 ? `${kept.join("\n")}\n` : undefined);
    },
    flush(done) {
      done(null, partial && keep(partial) ? partial : undefined);
    },
  });
}

const filtered = new WeakSet<Worker>();

/** Node emits "worker" on the next tick after a Worker is built, before any of its output is read. */
function onWorker(worker: Worker): void {
  if (filtered.has(worker)) return;
  filtered.add(worker);
  worker.stderr.unpipe(); // Node pipes a worker's stderr to the process's
  // Written rather than piped: one pipe per live plugin would add listeners to process.stderr.
  worker.stderr.pipe(wasiWarningFilter()).on("data", (line: Buffer) => process.stderr.write(line));
}

const isWasiWarning = (warning: unknown, type: unknown): boolean =>
  type === "ExperimentalWarning" && String((warning as Error)?.message ?? warning).startsWith("WASI ");

/** Loads in progress: the first one installs the filters, the last one removes them. */
let loads = 0;
let emitWarning: typeof process.emitWarning = process.emitWarning;

function dropWasiWarning(this: NodeJS.Process, warning: string | Error, ...rest: unknown[]): void {
  const options = rest[0] as string | { type?: string } | undefined;
  if (isWasiWarning(warning, typeof options === "string" ? options : options?.type)) return;
  (emitWarning as (...args: unknown[]) => void).call(this, warning, ...rest);
}

/**
 * Runs `load` (the SDK's import, a plugin's creation) without the WASI warning: the daemon's own is dropped (Node
 * emits it through process.emitWarning), and so is that of every worker started meanwhile.
 */
export async function withoutWasiWarning<T>(load: () => Promise<T>): Promise<T> {
  if (loads++ === 0) {
    emitWarning = process.emitWarning;
    process.emitWarning = dropWasiWarning as typeof process.emitWarning;
    process.on("worker", onWorker);
  }
  try {
    return await load();
  } finally {
    if (--loads === 0) {
      process.off("worker", onWorker);
      process.emitWarning = emitWarning;
    }
  }
}
