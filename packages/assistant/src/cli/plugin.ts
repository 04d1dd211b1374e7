import { resolve } from "node:path";
import type { Command } from "commander";
import type { CatalogEntry } from "../plugins/catalog.ts";
import type { InvalidPlugin, PluginInfo } from "../plugins/registry.ts";
import { type CliContext, output } from "./context.ts";

// `assistant plugin list|reload|install <PATH>|uninstall <ID>|catalog|reset-reputation [ID]`
// (docs/cli.md#plugins), over the daemon's plugin routes: the daemon owns the plugins folder and the running instances.

export function registerPluginCommands(program: Command, ctx: CliContext): void {
  const plugin = program.command("plugin").description("WASM plugins: sandboxed tools, channels and routers");
  const call = async <T>(what: string, method: "GET" | "POST" | "DELETE", path: string, body?: unknown) => {
    const { daemonRequest } = await import("./daemonClient.ts");
    return daemonRequest<T>(ctx, what, method, path, body);
  };
  plugin
    .command("list")
    .description("installed plugins with score and disabled-by-reputation state")
    .option("--json", "machine-readable output")
    .action(async (opts: { json?: boolean }) => {
      const value = await call<{ items: PluginInfo[]; invalid: InvalidPlugin[] }>(
        "plugins cannot be listed",
        "GET",
        "/api/plugins",
      );
      const { formatPlugins } = await import("../plugins/format.ts");
      output(ctx, opts.json, value, () => formatPlugins(value.items, value.invalid));
    });
  plugin
    .command("reload")
    .description("reload every plugin's manifest and module without restarting the daemon")
    .option("--json", "machine-readable output")
    .action(async (opts: { json?: boolean }) => {
      const value = await call<{ loaded: string[]; invalid: InvalidPlugin[] }>(
        "plugins cannot be reloaded",
        "POST",
        "/api/plugins/reload",
      );
      const { formatPluginReload } = await import("../plugins/format.ts");
      output(ctx, opts.json, value, () => formatPluginReload(value));
    });
  plugin
    .command("install <path>")
    .description("install from a folder holding plugin.json and its .wasm")
    .option("--replace", "replace an installed plugin with the same id")
    .option("--json", "machine-readable output")
    .action(async (path: string, opts: { replace?: boolean; json?: boolean }) => {
      const value = await call<PluginInfo>("the plugin was not installed", "POST", "/api/plugins/install", {
        path: resolve(path),
        ...(opts.replace ? { replace: true } : {}),
      });
      output(ctx, opts.json, value, () => {
        const hosts = value.capabilities.allowed_hosts;
        return [
          `Installed ${value.plugin_id} ${value.version} [${value.kind}]${value.tools.length ? `, tools: ${value.tools.join(", ")}` : ""}.`,
          hosts.length > 0
            ? `It may reach ${hosts.join(", ")} only where tools_policy.yaml allows the host too.`
            : "It has no network access.",
        ].join("\n");
      });
    });
  plugin
    .command("uninstall <id>")
    .description("remove a plugin and its reputation")
    .option("--json", "machine-readable output")
    .action(async (id: string, opts: { json?: boolean }) => {
      const value = await call<{ removed: string }>(
        "the plugin was not removed",
        "DELETE",
        `/api/plugins/${encodeURIComponent(id)}`,
      );
      output(ctx, opts.json, value, () => `Removed plugin ${value.removed}.`);
    });
  plugin
    .command("catalog")
    .description("every installed plugin and skill with author, version, trust level and status")
    .option("--json", "machine-readable output")
    .action(async (opts: { json?: boolean }) => {
      const value = await call<{ items: CatalogEntry[] }>("the catalog cannot be read", "GET", "/api/plugins/catalog");
      const { table } = await import("../llm/format.ts");
      output(ctx, opts.json, value, () =>
        value.items.length === 0
          ? "Nothing installed."
          : table([
              ["TYPE", "ID", "VERSION", "KIND", "AUTHOR", "TRUST", "STATUS"],
              ...value.items.map((e) => [
                e.type,
                e.id,
                e.version ?? "-",
                e.kind,
                e.author ?? "-",
                e.trust_level ?? "-",
                e.status,
              ]),
            ]),
      );
    });
  plugin
    .command("reset-reputation [id]")
    .description("reset one plugin's reputation (enabling it again), or every plugin's without an id")
    .option("--json", "machine-readable output")
    .action(async (id: string | undefined, opts: { json?: boolean }) => {
      const value = await call<{ reset: string }>(
        "the reputation was not reset",
        "POST",
        "/api/plugins/reputation/reset",
        id ? { plugin_id: id } : {},
      );
      output(ctx, opts.json, value, () =>
        value.reset === "all" ? "Every plugin's reputation was reset." : `Reputation of ${value.reset} reset.`,
      );
    });
}
