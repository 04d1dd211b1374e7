import { resolve } from "node:path";
import type { Command } from "commander";
import { type CliContext, output } from "./context.ts";
import { callDaemon } from "./daemonClient.ts";

// `assistant plugin list|reload|install <PATH>|uninstall <ID>|catalog|reset-reputation [ID]`
// (docs/cli.md#plugins), over the daemon's plugin routes: the daemon owns the plugins folder and the running instances.

export function registerPluginCommands(program: Command, ctx: CliContext): void {
  const plugin = program.command("plugin").description("WASM plugins: sandboxed tools, channels and routers");
  plugin
    .command("list")
    .description("installed plugins with score and disabled-by-reputation state")
    .option("--json", "machine-readable output")
    .action(async (opts: { json?: boolean }) => {
      const value = await callDaemon(ctx, "plugins cannot be listed", (client) => client.listPlugins());
      const { formatPlugins } = await import("../plugins/format.ts");
      output(ctx, opts.json, value, () => formatPlugins(value.items, value.invalid));
    });
  plugin
    .command("reload")
    .description("reload every plugin's manifest and module without restarting the daemon")
    .option("--json", "machine-readable output")
    .action(async (opts: { json?: boolean }) => {
      const value = await callDaemon(ctx, "plugins cannot be reloaded", (client) => client.reloadPlugins());
      const { formatPluginReload } = await import("../plugins/format.ts");
      output(ctx, opts.json, value, () => formatPluginReload(value));
    });
  plugin
    .command("install <path>")
    .description("install from a folder holding plugin.json and its .wasm")
    .option("--replace", "replace an installed plugin with the same id")
    .option("--json", "machine-readable output")
    .action(async (path: string, opts: { replace?: boolean; json?: boolean }) => {
      const value = await callDaemon(ctx, "the plugin was not installed", (client) =>
        client.installPlugin({ path: resolve(path), ...(opts.replace ? { replace: true } : {}) }),
      );
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
      const value = await callDaemon(ctx, "the plugin was not removed", (client) => client.uninstallPlugin(id));
      output(ctx, opts.json, value, () => `Removed plugin ${value.removed}.`);
    });
  plugin
    .command("catalog")
    .description("every installed plugin and skill with author, version, trust level and status")
    .option("--json", "machine-readable output")
    .action(async (opts: { json?: boolean }) => {
      const value = await callDaemon(ctx, "the catalog cannot be read", (client) => client.listCatalog());
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
      const value = await callDaemon(ctx, "the reputation was not reset", (client) =>
        client.resetPluginReputation(id ? { plugin_id: id } : {}),
      );
      output(ctx, opts.json, value, () =>
        value.reset === "all" ? "Every plugin's reputation was reset." : `Reputation of ${value.reset} reset.`,
      );
    });
}
