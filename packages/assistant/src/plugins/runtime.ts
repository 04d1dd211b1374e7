// The sandboxed WebAssembly plugin runtime: Extism's JS SDK with the module in a worker thread, plus what the SDK
// lacks: a per-call timeout (the worker is terminated and re-created lazily), a linear-memory cap and a fuel
// (instruction) limit (binary rewrites), an output cap, serialised calls, HTTP only to allowed hosts through the
// caller's fetch, files only through the caller's fs host function, and typed failures.
// Each call carries the caller's context to the host side of that call. SDK 1.0's `call(name, input)` has no
// per-call value for host functions, and a plugin may run only one call at a time anyway, so calls are queued per
// instance and a host request gets the context of the call running at that moment: set when the call starts
// running (not when it is queued), gone when it ends. One instance per concurrent call would cost a worker and a
// module instantiation each.
import type { Worker } from "node:worker_threads";
import type { CallContext, Plugin } from "@extism/extism";
import { FILES_FUNCTION, FILES_MODULE } from "./pluginFiles.ts";
import { withoutWasiWarning } from "./wasiWarning.ts";
import { type PreparedWasm, prepareWasm, WasmBinaryError, WebAssemblyApi } from "./wasmBinary.ts";
import { FUEL_EXHAUSTED_TRAP, meterWasm } from "./wasmMetering.ts";

export interface PluginLimits {
  /** Wall-clock limit per call; on expiry the worker is terminated and the instance re-created lazily on the next call. */
  timeoutMs: number;
  /** Cap on the module's linear memory in 64 KiB pages (the memory section's maximum is rewritten; growing past it fails). */
  maxMemoryPages: number;
  /** Instructions one call may run (see wasmMetering.ts for the unit); when spent the call fails as fuel_exhausted. */
  fuel: number;
  /** Output larger than this is refused (error kind output_too_large), not returned. */
  maxOutputBytes: number;
}

/** What a plugin is given; `C` is the per-call context the caller passes to `call` (runtime header). */
export interface PluginSandbox<C = unknown> {
  /** Hosts the plugin may call through Extism's http_request (exact names or globs such as `*.example.com`). Empty = no network. */
  allowedHosts: string[];
  /** Config key/values given to the plugin (Extism config). */
  config: Record<string, string>;
  /**
   * Makes every HTTP request the plugin makes, after the allowedHosts check passed; throwing refuses it (kind
   * denied). `context` is the running call's (undefined while the module starts).
   */
  fetch(url: URL, init: RequestInit, hold: Hold, context: C | undefined): Promise<Response>;
  /**
   * Answers the plugin's `extism:host/user` `fs` host function: a JSON request in, a JSON result out; throwing
   * refuses it and fails the call (kind denied). `context` is the running call's.
   */
  files(request: string, hold: Hold, context: C | undefined): Promise<string>;
}

/** Stops the call's clock while `waiting` is pending: waiting for the user's approval is not the plugin's time. */
export type Hold = <T>(waiting: Promise<T>) => Promise<T>;

export type PluginFailureKind =
  | "timeout"
  | "cancelled"
  | "trap"
  | "fuel_exhausted"
  | "memory"
  | "denied"
  | "output_too_large"
  | "invalid_module"
  | "missing_export";

/** The only error a plugin call or load throws. */
export class PluginCallError extends Error {
  readonly kind: PluginFailureKind;
  constructor(kind: PluginFailureKind, message: string) {
    super(message);
    this.name = "PluginCallError";
    this.kind = kind;
  }
}

export interface PluginInstance<C = unknown> {
  /**
   * Runs one export with `input`; calls on one instance run one at a time, in order. The host requests the call
   * makes get `context`.
   */
  call(exportName: string, input: string, signal?: AbortSignal, context?: C): Promise<string>;
  /** Names of the exported functions. */
  exports(): Promise<string[]>;
  /** Terminates the worker; queued and later calls fail with kind cancelled. */
  close(): Promise<void>;
}

// What the SDK's worker provides under "extism:host/env"; any other import would fail instantiation in the worker,
// where the SDK does not report it (the load would hang), so such modules are refused up front.
const EXTISM_ENV = "extism:host/env";
const HOST_FUNCTIONS = new Set([
  "alloc",
  "free",
  "load_u8",
  "load_u64",
  "store_u8",
  "store_u64",
  "input_offset",
  "input_length",
  "input_load_u8",
  "input_load_u64",
  "output_set",
  "error_set",
  "config_get",
  "var_get",
  "var_set",
  "http_request",
  "http_status_code",
  "length",
  "length_unsafe",
  "log_warn",
  "log_info",
  "log_debug",
  "log_error",
]);
/** The SDK's message when a URL's host matches no allowedHosts entry (it then terminates the worker itself). */
const SDK_HOST_DENIED = /^Call error: HTTP request to .* is not allowed/;
const SDK_PLUGIN_ERROR = "Plugin-originated error: ";
const MAX_MESSAGE = 2_000;

/**
 * Validates a module without running it: well-formed, memory cappable, meterable, imports the sandbox provides;
 * its function exports.
 */
export function inspectWasm(wasm: Uint8Array): { exports: string[] } {
  return { exports: prepare(wasm, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER).exports };
}

/** Compiles and instantiates the plugin once (in a worker); calls reuse that instance until a failure discards it. */
export async function loadPlugin<C = unknown>(
  wasm: Uint8Array,
  sandbox: PluginSandbox<C>,
  limits: PluginLimits,
): Promise<PluginInstance<C>> {
  const prepared = prepare(wasm, limits.maxMemoryPages, limits.fuel);
  let module: WebAssembly.Module;
  try {
    module = await WebAssemblyApi.compile(prepared.bytes);
    // Link and initialise memory and tables here, with inert imports and without running code (there is no start
    // section any more), so that a module failing this never reaches the worker.
    new WebAssemblyApi.Instance(module, {
      [EXTISM_ENV]: Object.fromEntries([...HOST_FUNCTIONS].map((n) => [n, () => 0])),
      [FILES_MODULE]: { [FILES_FUNCTION]: () => 0 },
    });
  } catch (error) {
    throw new PluginCallError("invalid_module", `the module cannot be instantiated: ${messageOf(error)}`);
  }
  const instance = new SandboxedPlugin(module, prepared, sandbox, limits);
  await instance.warmUp();
  return instance;
}

function prepare(wasm: Uint8Array, maxMemoryPages: number, fuel: number): PreparedWasm {
  try {
    const prepared = prepareWasm(wasm, maxMemoryPages);
    const foreign = prepared.imports.find(
      (i) =>
        !(i.module === EXTISM_ENV && HOST_FUNCTIONS.has(i.name)) &&
        !(i.module === FILES_MODULE && i.name === FILES_FUNCTION),
    );
    if (foreign)
      throw new WasmBinaryError(`imports ${foreign.module}.${foreign.name}, which the sandbox does not provide`);
    // The SDK runs hs_init while instantiating in the worker, outside any timeout.
    if (prepared.exports.includes("hs_init")) throw new WasmBinaryError("modules exporting hs_init are not supported");
    return { ...prepared, bytes: meterWasm(prepared.bytes, fuel) };
  } catch (error) {
    if (error instanceof WasmBinaryError) throw new PluginCallError("invalid_module", error.message);
    throw new PluginCallError("invalid_module", `unreadable module: ${messageOf(error)}`);
  }
}

/** One running call: its caller's context, how to end it early and what its host side saw. */
interface CallState<C> {
  context: C | undefined;
  interrupt(error: PluginCallError): void;
  hold: Hold;
  readonly fetches: AbortController;
  denial: string | null;
  lastErrorLog: string | null;
}

/** A live worker; the SDK's BackgroundPlugin keeps its Worker public but untyped. */
interface Live {
  plugin: Plugin;
  worker: Worker;
}

class SandboxedPlugin<C> implements PluginInstance<C> {
  readonly #module: WebAssembly.Module;
  readonly #prepared: PreparedWasm;
  readonly #sandbox: PluginSandbox<C>;
  readonly #limits: PluginLimits;
  #live: Live | null = null;
  #queue: Promise<unknown> = Promise.resolve();
  #current: CallState<C> | null = null;
  #closed = false;

  constructor(module: WebAssembly.Module, prepared: PreparedWasm, sandbox: PluginSandbox<C>, limits: PluginLimits) {
    this.#module = module;
    this.#prepared = prepared;
    this.#sandbox = sandbox;
    this.#limits = limits;
  }

  /** Starts the worker at load so the first call pays no start-up, and a failing start function fails the load. */
  warmUp(): Promise<void> {
    return this.#enqueue(async () => {
      try {
        await this.#run(async () => {
          await this.#ensureLive();
        });
      } catch (error) {
        await this.close();
        throw error;
      }
    });
  }

  call(exportName: string, input: string, signal?: AbortSignal, context?: C): Promise<string> {
    return this.#enqueue(() => {
      if (!this.#prepared.exports.includes(exportName)) {
        throw new PluginCallError(
          "missing_export",
          `the plugin has no exported function ${JSON.stringify(exportName)}`,
        );
      }
      return this.#run(
        async () => {
          const live = await this.#ensureLive();
          const output = await live.plugin.call(exportName, input);
          const bytes = output ? output.bytes() : new Uint8Array();
          if (bytes.byteLength > this.#limits.maxOutputBytes) {
            throw new PluginCallError(
              "output_too_large",
              `the plugin returned ${bytes.byteLength} bytes; the limit is ${this.#limits.maxOutputBytes}`,
            );
          }
          // Drop the call's input and output blocks (the SDK keeps every block until a reset).
          await live.plugin.reset();
          return new TextDecoder().decode(bytes);
        },
        signal,
        context,
      );
    });
  }

  async exports(): Promise<string[]> {
    return [...this.#prepared.exports];
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#current?.interrupt(new PluginCallError("cancelled", "the plugin was closed"));
    this.#discard();
  }

  #enqueue<T>(job: () => Promise<T> | T): Promise<T> {
    const result = this.#queue.then(() => {
      if (this.#closed) throw new PluginCallError("cancelled", "the plugin was closed");
      return job();
    });
    this.#queue = result.catch(() => undefined);
    return result;
  }

  /**
   * Runs `body` as the current call under the timeout and `signal`, its host requests given `context`; every
   * failure becomes a PluginCallError.
   */
  async #run<T>(body: () => Promise<T>, signal?: AbortSignal, context?: C): Promise<T> {
    if (signal?.aborted) throw new PluginCallError("cancelled", "the call was cancelled before it started");
    let interrupt: (error: PluginCallError) => void = () => undefined;
    const interrupted = new Promise<never>((_, reject) => {
      interrupt = reject;
    });
    const stop = (error: PluginCallError) => {
      state.fetches.abort(error);
      this.#discard();
      interrupt(error);
    };
    // The clock: `left` ms of the limit remain once it runs again; holds (approvals) stop it.
    let left = this.#limits.timeoutMs;
    let since = 0;
    let timer: NodeJS.Timeout | undefined;
    let holds = 0;
    const run = () => {
      since = performance.now();
      timer = setTimeout(
        () => stop(new PluginCallError("timeout", `the plugin ran longer than ${this.#limits.timeoutMs} ms`)),
        left,
      );
    };
    const hold: Hold = async (waiting) => {
      if (holds++ === 0) {
        clearTimeout(timer);
        left = Math.max(0, left - (performance.now() - since));
      }
      try {
        return await waiting;
      } finally {
        if (--holds === 0 && this.#current === state) run();
      }
    };
    const state: CallState<C> = {
      context,
      interrupt: stop,
      hold,
      fetches: new AbortController(),
      denial: null,
      lastErrorLog: null,
    };
    run();
    const onAbort = () => stop(new PluginCallError("cancelled", "the call was cancelled"));
    signal?.addEventListener("abort", onAbort, { once: true });
    this.#current = state;
    try {
      return await Promise.race([body(), interrupted]);
    } catch (error) {
      throw this.#failure(error, state);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      this.#current = null;
    }
  }

  /** Maps what the SDK threw to a PluginCallError; any failure but a plugin-reported error discards the worker. */
  #failure(error: unknown, state: CallState<C>): PluginCallError {
    if (error instanceof PluginCallError) {
      if (error.kind !== "output_too_large") this.#discard();
      return error;
    }
    const message = messageOf(error);
    if (message.startsWith(SDK_PLUGIN_ERROR)) {
      return new PluginCallError("trap", clip(message.slice(SDK_PLUGIN_ERROR.length)));
    }
    this.#discard();
    if (state.denial) return new PluginCallError("denied", clip(state.denial));
    if (SDK_HOST_DENIED.test(message)) return new PluginCallError("denied", clip(message.replace(/^Call error: /, "")));
    if (message === FUEL_EXHAUSTED_TRAP) {
      return new PluginCallError(
        "fuel_exhausted",
        `the plugin ran out of fuel (${this.#limits.fuel} instructions per call)`,
      );
    }
    const detail = state.lastErrorLog ? `${state.lastErrorLog} (${message})` : message;
    return new PluginCallError("trap", clip(`the plugin failed: ${detail}`));
  }

  async #ensureLive(): Promise<Live> {
    if (this.#live) return this.#live;
    const plugin = await withoutWasiWarning(async () => {
      // Loaded with the first plugin call, not at the daemon's start: ~100 KB, and it loads WASI.
      const { default: createPlugin } = await import("@extism/extism");
      return createPlugin(
        { wasm: [{ module: this.#module }] },
        {
          runInWorker: true,
          useWasi: false,
          allowedPaths: {},
          allowedHosts: [...this.#sandbox.allowedHosts],
          config: { ...this.#sandbox.config },
          fetch: (input, init) => this.#fetch(input, init),
          logger: this.#logger(),
          functions: {
            [FILES_MODULE]: {
              [FILES_FUNCTION]: (context: CallContext, request: bigint) => this.#files(context, request),
            },
          },
        },
      );
    });
    const worker = (plugin as unknown as { worker: Worker }).worker;
    const live: Live = { plugin, worker };
    // The SDK does not listen for worker errors; an unhandled one would crash the daemon.
    worker.on("error", (error: Error & { code?: string }) => {
      const kind = error.code === "ERR_WORKER_OUT_OF_MEMORY" ? "memory" : "trap";
      this.#lost(live, new PluginCallError(kind, clip(`the plugin worker failed: ${error.message}`)));
    });
    worker.on("exit", () => this.#lost(live, new PluginCallError("trap", "the plugin worker exited")));
    this.#live = live;
    if (this.#prepared.startExport) await plugin.call(this.#prepared.startExport, "");
    return live;
  }

  #lost(live: Live, error: PluginCallError): void {
    if (this.#live !== live) return;
    this.#live = null;
    this.#current?.interrupt(error);
  }

  /** Terminates the current worker, if any; the next call starts a fresh one. */
  #discard(): void {
    const live = this.#live;
    this.#live = null;
    if (live) void live.plugin.close();
  }

  /** The SDK's fetch hook: runs after its allowedHosts check; a refusal is recorded so the call fails as denied. */
  async #fetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
    const state = this.#current;
    if (!state) throw new Error("HTTP request outside a plugin call");
    try {
      const url = new URL(input instanceof Request ? input.url : input);
      if (url.protocol !== "http:" && url.protocol !== "https:")
        throw new Error(`${url.protocol} URLs are not allowed`);
      return await this.#sandbox.fetch(url, { ...init, signal: state.fetches.signal }, state.hold, state.context);
    } catch (error) {
      state.denial ??= `HTTP request refused: ${messageOf(error)}`;
      throw error;
    }
  }

  /** The `fs` host function (runs on this thread while the worker waits): JSON in, JSON out; a refusal is recorded. */
  async #files(context: CallContext, offset: bigint): Promise<bigint> {
    const state = this.#current;
    if (!state) throw new Error("file request outside a plugin call");
    const request = context.read(offset)?.text() ?? "";
    try {
      return context.store(await this.#sandbox.files(request, state.hold, state.context));
    } catch (error) {
      state.denial ??= `file access refused: ${messageOf(error)}`;
      throw error;
    }
  }

  /** Plugin log lines: the last error line explains a following trap (the test plugins' abort handler logs there). */
  #logger(): Console {
    const keepError = (message: unknown) => {
      if (this.#current) this.#current.lastErrorLog = clip(String(message));
    };
    const ignore = () => undefined;
    return { error: keepError, warn: ignore, info: ignore, debug: ignore, log: ignore } as unknown as Console;
  }
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (error && typeof error === "object" && "message" in error) return String(error.message);
  return String(error);
}

function clip(text: string): string {
  return text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE)}…` : text;
}
