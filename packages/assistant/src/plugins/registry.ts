import {
  copyFileSync,
  type Dirent,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";
import { z } from "zod";
import type { DaemonSettings } from "../config/settings.ts";
import type { EventLog } from "../events/eventLog.ts";
import type { Logger } from "../log/logger.ts";
import { safeFetch } from "../tools/safeFetch.ts";
import { type Tool, type ToolContext, ToolDenied, ToolFailure } from "../tools/tool.ts";
import { AppError } from "../util/errors.ts";
import { readBoundedFile } from "../util/readBounded.ts";
import { manifestSchema, PLUGIN_KINDS, type PluginManifest, parseManifest } from "./manifest.ts";
import { pluginFileOp } from "./pluginFiles.ts";
import { type Outcome, type Reputation, type ReputationStore, reputationSchema } from "./reputation.ts";
import { loadRules, type RoutingRule } from "./routingRules.ts";
import {
  inspectWasm,
  loadPlugin,
  PluginCallError,
  type PluginInstance,
  type PluginLimits,
  type PluginSandbox,
} from "./runtime.ts";

// The installed WASM plugins: every data_dir/plugins/<id>/ with plugin.json and its .wasm, scanned at start and
// on reload (no restart). A plugin is instantiated once, on its first call, and reused. Its tools join the tool
// registry as `<plugin_id>__<tool>` and pass the same policy chain as built-in tools; its HTTP requests must be
// in its manifest's allowed_hosts AND allowed by the tools policy (web rules, SSRF checks). Every call's outcome
// feeds the plugin's reputation; a plugin disabled by reputation offers no tools until it is reset.

export const MAX_WASM_BYTES = 32 * 1024 * 1024;
const MAX_MANIFEST_BYTES = 256 * 1024;
const MAX_OUTPUT_BYTES = 1024 * 1024;
const MAX_HTTP_BYTES = 2 * 1024 * 1024;

export const pluginInfoSchema = z
  .object({
    plugin_id: z.string(),
    name: z.string(),
    version: z.string(),
    kind: z.enum(PLUGIN_KINDS),
    description: z.string(),
    author: z.string().nullable(),
    trust_level: z.string().nullable(),
    exports: z.array(z.string()),
    tools: z.array(z.string()),
    capabilities: manifestSchema.shape.capabilities.unwrap(),
    limits: z.object({ timeout_ms: z.number(), memory_mb: z.number(), fuel: z.number() }),
    score: z.number(),
    disabled_by_reputation: z.boolean(),
    disabled_reason: z.string().nullable(),
    reputation: reputationSchema,
    /** Instantiated (it has run since the last reload). */
    loaded: z.boolean(),
    manifest: manifestSchema,
  })
  .meta({ id: "Plugin" });

export type PluginInfo = z.infer<typeof pluginInfoSchema>;

/** A plugin folder that was skipped, and why. */
export const invalidPluginSchema = z.object({ folder: z.string(), reason: z.string() }).meta({ id: "InvalidPlugin" });

export type InvalidPlugin = z.infer<typeof invalidPluginSchema>;

export const pluginReloadSchema = z
  .object({ loaded: z.array(z.string()), invalid: z.array(invalidPluginSchema) })
  .meta({ id: "PluginReload" });

interface Loaded {
  manifest: PluginManifest;
  dir: string;
  wasm: Uint8Array;
  tools: Tool[];
  rules: RoutingRule[];
  limits: PluginLimits;
  instance: Promise<PluginInstance<PluginCall>> | null;
}

/**
 * One plugin tool call, handed to the runtime with the call itself: its host requests (HTTP, files) are judged
 * with this call's tool context and review queue, whichever other call of the plugin waits or runs.
 */
interface PluginCall {
  ctx: ToolContext;
  tool: string;
  /** The policy refusal of one of its host requests, kept so the call fails with that rule. */
  denied: ToolDenied | null;
}

export interface PluginRegistryOptions {
  dir: string;
  /** The ceilings a manifest's limits can only lower. */
  settings: Pick<DaemonSettings, "pluginTimeoutMs" | "pluginMaxMemoryMb" | "pluginFuel">;
  reputation: ReputationStore;
  events: Pick<EventLog, "emit">;
  logger: Pick<Logger, "warn" | "info">;
  /** A vault secret (plugin config values live there as plugin.<id>.<key>). */
  secret: (key: string) => string | null;
}

export class PluginRegistry {
  readonly #options: PluginRegistryOptions;
  #plugins = new Map<string, Loaded>();
  #invalid: InvalidPlugin[] = [];

  constructor(options: PluginRegistryOptions) {
    this.#options = options;
    this.#scan();
  }

  list(): PluginInfo[] {
    return [...this.#plugins.values()].map((p) => this.#info(p));
  }

  invalid(): InvalidPlugin[] {
    return this.#invalid;
  }

  get(id: string): PluginInfo {
    return this.#info(this.#require(id));
  }

  /** Tools of every plugin not disabled by reputation (the tool registry asks on each lookup). */
  tools(): Tool[] {
    const tools: Tool[] = [];
    for (const p of this.#plugins.values()) {
      if (!this.#options.reputation.get(p.manifest.id).disabled_by_reputation) tools.push(...p.tools);
    }
    return tools;
  }

  rules(): RoutingRule[] {
    return [...this.#plugins.values()].flatMap((p) => p.rules);
  }

  /** Closes every instance and rescans the folder (`assistant plugin reload`, /reload). */
  async reload(): Promise<z.infer<typeof pluginReloadSchema>> {
    await this.close();
    this.#scan();
    const loaded = [...this.#plugins.keys()];
    this.#options.events.emit("plugins_reloaded", { loaded: loaded.length, invalid: this.#invalid.length });
    return { loaded, invalid: this.#invalid };
  }

  /** Copies a plugin folder (plugin.json + its .wasm) or a plugin.json's folder into plugins/<id>/. */
  async install(path: string, replace: boolean): Promise<PluginInfo> {
    const source = resolve(path);
    let folder = source;
    try {
      if (statSync(source).isFile()) folder = dirname(source);
    } catch {
      throw new AppError("not_found", `${path} does not exist`);
    }
    let manifestText: Buffer;
    try {
      manifestText = readLimited(join(folder, "plugin.json"), MAX_MANIFEST_BYTES, "plugin.json");
    } catch (error) {
      throw new AppError("invalid_request", `not installed: ${(error as Error).message}`);
    }
    let manifest: PluginManifest;
    try {
      manifest = parseManifest(manifestText.toString("utf8"));
      checkModule(readLimited(join(folder, manifest.wasm), MAX_WASM_BYTES, manifest.wasm), manifest);
    } catch (error) {
      throw new AppError("invalid_request", `not installed: ${(error as Error).message}`);
    }
    const target = join(this.#options.dir, manifest.id);
    const exists = existsSync(target);
    if (exists && !replace) {
      throw new AppError(
        "conflict",
        `plugin ${manifest.id} is installed already; uninstall it or install with replace`,
      );
    }
    mkdirSync(this.#options.dir, { recursive: true, mode: 0o700 });
    const temp = mkdtempSync(join(this.#options.dir, ".install-"));
    try {
      copyFileSync(join(folder, "plugin.json"), join(temp, "plugin.json"));
      copyFileSync(join(folder, manifest.wasm), join(temp, manifest.wasm));
      await this.#closeOne(manifest.id);
      if (exists) rmSync(target, { recursive: true, force: true });
      renameSync(temp, target);
    } finally {
      rmSync(temp, { recursive: true, force: true });
    }
    this.#scan();
    this.#options.events.emit("plugin_installed", { plugin_id: manifest.id, version: manifest.version });
    return this.get(manifest.id);
  }

  async uninstall(id: string): Promise<void> {
    if (!/^[a-z0-9][a-z0-9_]{0,31}$/.test(id))
      throw new AppError("invalid_request", `"${id.slice(0, 80)}" is not a plugin id`);
    const known = this.#plugins.has(id) || this.#invalid.some((i) => i.folder === id);
    if (!known) throw new AppError("not_found", `no plugin ${id} is installed`);
    await this.#closeOne(id);
    rmSync(join(this.#options.dir, id), { recursive: true, force: true });
    this.#options.reputation.forget(id);
    this.#scan();
    this.#options.events.emit("plugin_uninstalled", { plugin_id: id });
  }

  /** User feedback on a plugin's work (a reputation outcome). */
  feedback(id: string, rating: "up" | "down"): Reputation {
    this.#require(id);
    return this.#options.reputation.record(id, rating === "up" ? "feedback_up" : "feedback_down");
  }

  async close(): Promise<void> {
    await Promise.all([...this.#plugins.keys()].map((id) => this.#closeOne(id)));
  }

  async #closeOne(id: string): Promise<void> {
    const p = this.#plugins.get(id);
    const instance = p?.instance;
    if (!p || !instance) return;
    p.instance = null;
    await instance.then((i) => i.close()).catch(() => {});
  }

  #require(id: string): Loaded {
    const p = this.#plugins.get(id);
    if (!p) throw new AppError("not_found", `no plugin ${id} is installed`);
    return p;
  }

  #info(p: Loaded): PluginInfo {
    const m = p.manifest;
    const reputation = this.#options.reputation.get(m.id);
    return {
      plugin_id: m.id,
      name: m.name,
      version: m.version,
      kind: m.kind,
      description: m.description,
      author: m.author ?? null,
      trust_level: m.trust_level ?? null,
      exports: m.exports,
      tools: p.tools.map((t) => t.name),
      capabilities: m.capabilities,
      limits: {
        timeout_ms: p.limits.timeoutMs,
        memory_mb: (p.limits.maxMemoryPages * 65536) / 1048576,
        fuel: p.limits.fuel,
      },
      score: reputation.score,
      disabled_by_reputation: reputation.disabled_by_reputation,
      disabled_reason: reputation.disabled_reason,
      reputation,
      loaded: p.instance !== null,
      manifest: m,
    };
  }

  #scan(): void {
    const plugins = new Map<string, Loaded>();
    const invalid: InvalidPlugin[] = [];
    let entries: Dirent[] = [];
    try {
      entries = readdirSync(this.#options.dir, { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
        this.#options.logger.warn("cannot read the plugins folder", { error: (error as Error).message });
      }
    }
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.name.startsWith(".") || !entry.isDirectory()) continue;
      const dir = join(this.#options.dir, entry.name);
      const previous = this.#plugins.get(entry.name);
      try {
        const manifest = parseManifest(
          readLimited(join(dir, "plugin.json"), MAX_MANIFEST_BYTES, "plugin.json").toString("utf8"),
        );
        if (manifest.id !== entry.name)
          throw new Error(`plugin.json says id ${manifest.id} but the folder is ${entry.name}`);
        const wasm = readLimited(join(dir, manifest.wasm), MAX_WASM_BYTES, manifest.wasm);
        checkModule(wasm, manifest);
        const loaded: Loaded = {
          manifest,
          dir,
          wasm,
          tools: [],
          rules: loadRules(manifest.routing_rules, { kind: "plugin", id: manifest.id }, null),
          limits: this.#limits(manifest),
          // An unchanged module keeps its running instance across a rescan (install of another plugin).
          instance: previous && sameBytes(previous.wasm, wasm) ? previous.instance : null,
        };
        if (previous?.instance && loaded.instance === null) previous.instance.then((i) => i.close()).catch(() => {});
        loaded.tools = manifest.tools.map((t) => this.#tool(loaded, t));
        plugins.set(manifest.id, loaded);
      } catch (error) {
        const reason = error instanceof PluginCallError || error instanceof Error ? error.message : String(error);
        invalid.push({ folder: entry.name, reason });
        this.#options.logger.warn("plugin skipped", { folder: entry.name, reason });
      }
    }
    this.#plugins = plugins;
    this.#invalid = invalid;
  }

  #limits(manifest: PluginManifest): PluginLimits {
    const { pluginTimeoutMs: timeoutMs, pluginMaxMemoryMb: memoryMb, pluginFuel: fuel } = this.#options.settings;
    return {
      timeoutMs: Math.min(timeoutMs, manifest.limits.timeout_ms ?? timeoutMs),
      maxMemoryPages: Math.floor((Math.min(memoryMb, manifest.limits.memory_mb ?? memoryMb) * 1048576) / 65536),
      fuel: Math.min(fuel, manifest.limits.fuel ?? fuel),
      maxOutputBytes: MAX_OUTPUT_BYTES,
    };
  }

  #tool(p: Loaded, spec: PluginManifest["tools"][number]): Tool {
    const name = `${p.manifest.id}__${spec.name}`;
    let parameters: z.ZodType;
    try {
      parameters = z.fromJSONSchema(spec.parameters as Parameters<typeof z.fromJSONSchema>[0]);
    } catch (error) {
      throw new Error(`tool ${spec.name}: parameters are not a usable JSON Schema (${(error as Error).message})`);
    }
    const { allowed_hosts, allowed_paths } = p.manifest.capabilities;
    // Not defineTool: the parameters are the plugin's own JSON Schema, given to the model as the plugin declared it.
    return {
      name,
      description: `${spec.description} (plugin ${p.manifest.id})`,
      parameters,
      jsonSchema: spec.parameters,
      resource: "none",
      // Its host requests: HTTP to the manifest's hosts, files under its allowed_paths.
      asks: [
        ...(allowed_hosts.length > 0 ? ["web" as const] : []),
        ...(allowed_paths.length > 0 ? ["read" as const, "write" as const] : []),
      ],
      execute: async (args, ctx) => ({
        text: await this.#call(p, name, spec.export, pluginInput(spec.input_param, args), ctx),
        untrusted: `plugin ${p.manifest.id}`,
      }),
    };
  }

  async #call(p: Loaded, tool: string, exportName: string, input: string, ctx: ToolContext): Promise<string> {
    const id = p.manifest.id;
    const reputation = this.#options.reputation;
    const state = reputation.get(id);
    if (state.disabled_by_reputation) throw new ToolFailure(state.disabled_reason!);
    p.instance ??= loadPlugin(p.wasm, this.#sandbox(p), p.limits).catch((error: unknown) => {
      p.instance = null;
      throw error;
    });
    const record = (outcome: Outcome) => reputation.record(id, outcome);
    const call: PluginCall = { ctx, tool, denied: null };
    try {
      const instance = await p.instance;
      const output = await instance.call(exportName, input, ctx.signal, call);
      record("success");
      return output;
    } catch (error) {
      if (!(error instanceof PluginCallError)) throw error;
      const denied = call.denied;
      switch (error.kind) {
        case "cancelled":
          throw new ToolFailure(`plugin ${id} call cancelled`);
        case "denied":
          record("denied");
          if (denied) throw denied;
          throw new ToolDenied(
            `plugin ${id} allowed_hosts`,
            join(p.dir, "plugin.json"),
            `plugin ${id} asked for a host its manifest does not list: ${error.message}`,
          );
        case "timeout":
          record("timeout");
          throw new ToolFailure(`plugin ${id} did not finish within ${p.limits.timeoutMs} ms and was stopped`);
        case "fuel_exhausted":
          record("trap");
          throw new ToolFailure(
            `plugin ${id} ran out of fuel (its limit is ${p.limits.fuel} instructions per call) and was stopped`,
          );
        case "trap":
        case "memory":
          record("trap");
          throw new ToolFailure(`plugin ${id} crashed: ${error.message}`);
        default:
          record("failure");
          throw new ToolFailure(`plugin ${id} failed: ${error.message}`);
      }
    }
  }

  /**
   * What a plugin is given: its manifest's hosts and config keys, HTTP through the policy and safe fetch, and
   * files under its allowed_paths through the policy.
   */
  #sandbox(p: Loaded): PluginSandbox<PluginCall> {
    const config: Record<string, string> = {};
    for (const key of p.manifest.capabilities.config_keys) {
      const value = this.#options.secret(`plugin.${p.manifest.id}.${key}`);
      if (value !== null) config[key] = value;
    }
    return {
      allowedHosts: p.manifest.capabilities.allowed_hosts,
      config,
      fetch: (url, init, hold, running) =>
        inCall(running, async (call) => {
          const method = (init.method ?? "GET").toUpperCase();
          if (method !== "GET") {
            throw new ToolDenied(
              "plugins: GET only",
              "built-in default",
              `plugin ${p.manifest.id} asked for HTTP ${method}; plugins may only GET`,
            );
          }
          const res = await safeFetch(url, {
            permit: (target) => hold(call.ctx.permit({ kind: "web", url: target })),
            signal: init.signal ?? call.ctx.signal,
            maxBytes: MAX_HTTP_BYTES,
          });
          return new Response(new Uint8Array(res.body), {
            status: res.status,
            headers: { "content-type": res.mediaType || "application/octet-stream" },
          });
        }),
      files: (request, hold, running) =>
        inCall(running, async (call) => {
          const result = await pluginFileOp(request, {
            pluginId: p.manifest.id,
            manifestFile: join(p.dir, "plugin.json"),
            allowedPaths: p.manifest.capabilities.allowed_paths,
            tool: call.tool,
            permit: (toolRequest) => hold(call.ctx.permit(toolRequest)),
            ctx: call.ctx,
          });
          return JSON.stringify(result);
        }),
    };
  }
}

function readLimited(path: string, maxBytes: number, label: string): Buffer {
  const data = readBoundedFile(path, maxBytes, label);
  if (data === null) throw new Error(`${label} is missing`);
  return data;
}

/** The module is valid, cappable, and exports every function the manifest names. */
function checkModule(wasm: Uint8Array, manifest: PluginManifest): void {
  const { exports } = inspectWasm(wasm);
  const missing = manifest.exports.filter((e) => !exports.includes(e));
  if (missing.length > 0) throw new Error(`${manifest.wasm} does not export ${missing.join(", ")}`);
}

function pluginInput(param: string | undefined, args: unknown): string {
  if (param === undefined) return JSON.stringify(args ?? {});
  const value = (args as Record<string, unknown> | null)?.[param];
  return typeof value === "string" ? value : JSON.stringify(value ?? null);
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(a, b) === 0;
}

/** Runs a host request of the call it belongs to; a policy refusal is kept so the call fails with its rule. */
async function inCall<T>(call: PluginCall | undefined, body: (call: PluginCall) => Promise<T>): Promise<T> {
  if (!call) throw new Error("no call in progress");
  try {
    return await body(call);
  } catch (error) {
    if (error instanceof ToolDenied) call.denied = error;
    throw error;
  }
}
