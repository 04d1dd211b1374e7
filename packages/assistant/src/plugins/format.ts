import type { InvalidPlugin, PluginInfo } from "./registry.ts";

// Plugins as plain text, for /plugins, /reload and `assistant plugin list|reload`.

export function formatPlugins(plugins: readonly PluginInfo[], invalid: readonly InvalidPlugin[]): string {
  const lines: string[] = [];
  if (plugins.length === 0) lines.push("No plugins installed (`assistant plugin install <PATH>`).");
  else {
    lines.push("Plugins:");
    for (const p of plugins) {
      const state = p.disabled_by_reputation ? `DISABLED (${p.disabled_reason})` : "enabled";
      lines.push(
        `  ${p.plugin_id} ${p.version} [${p.kind}] score ${p.score}, ${state}${p.tools.length ? `; tools: ${p.tools.join(", ")}` : ""}`,
      );
    }
  }
  if (invalid.length > 0) lines.push("Skipped (invalid):", ...invalid.map((i) => `  ${i.folder}: ${i.reason}`));
  return lines.join("\n");
}

export function formatPluginReload(result: { loaded: string[]; invalid: InvalidPlugin[] }): string {
  const head = `Reloaded: ${result.loaded.length} plugin${result.loaded.length === 1 ? "" : "s"}${result.loaded.length ? ` (${result.loaded.join(", ")})` : ""}.`;
  if (result.invalid.length === 0) return head;
  return [head, "Skipped (invalid):", ...result.invalid.map((i) => `  ${i.folder}: ${i.reason}`)].join("\n");
}
