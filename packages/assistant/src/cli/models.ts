import type { Command } from "commander";
import type { RouteTargetRef } from "../llm/defaultRoute.ts";
import { formatRoutes, table } from "../llm/format.ts";
import type { ProviderChange, ProviderStatus } from "../llm/providerSettings.ts";
import type { RouteEditResult, SetRouteResult } from "../llm/routeEditor.ts";
import { plural } from "../util/plural.ts";
import { type CliContext, output, readStdin } from "./context.ts";
import { registerEmbeddedDownload } from "./embeddedDownload.ts";

// `assistant config models` (routes per category) and `assistant config provider` (local server, cloud accounts):
// edits of llm_router.yaml and the vault that work without a daemon. Services are imported inside the actions.

export function registerModelsCommands(program: Command, ctx: CliContext): void {
  const config = subcommand(program, "config", "configuration files and persistent settings");
  const models = subcommand(config, "models", "which model answers which category (llm_router.yaml)");
  registerRouteCommands(models, ctx);
  registerModelsFetch(models, ctx);
  registerEmbeddedDownload(models, ctx);
  const provider = subcommand(config, "provider", "LLM providers: a local model server, cloud accounts");
  registerProviderCommands(provider, ctx);
}

/** Other areas add commands under the same parents: whoever registers first creates them. */
function subcommand(parent: Command, name: string, description: string): Command {
  return parent.commands.find((command) => command.name() === name) ?? parent.command(name).description(description);
}

// ---- config models ---------------------------------------------------------------------------------------

function registerRouteCommands(models: Command, ctx: CliContext): void {
  models
    .command("routes")
    .description("the primary and fallback models of every category, defaults included")
    .option("--json", "machine-readable output")
    .action(async (opts: { json?: boolean }) => {
      const [{ configFilePath, loadConfig }, { listRoutes }] = await Promise.all([
        import("../config/configFiles.ts"),
        import("../llm/routeEditor.ts"),
      ]);
      const routes = listRoutes(loadConfig("llm_router", ctx.paths));
      const file = configFilePath("llm_router", ctx.paths);
      output(ctx, opts.json, { file, routes }, () => formatRoutes(routes));
    });

  models
    .command("get [CATEGORY]")
    .description("the route of one category (default conversation)")
    .option("--json", "machine-readable output")
    .action(async (category: string | undefined, opts: { json?: boolean }) => {
      const [{ configFilePath, loadConfig }, { getRoute }] = await Promise.all([
        import("../config/configFiles.ts"),
        import("../llm/routeEditor.ts"),
      ]);
      const route = getRoute(loadConfig("llm_router", ctx.paths), category);
      const file = configFilePath("llm_router", ctx.paths);
      output(ctx, opts.json, { file, ...route }, () =>
        [
          `${route.category} (${route.source === "file" ? `from ${file}` : "default: no entry in llm_router.yaml"})`,
          `  primary:  ${route.primary ? label(route.primary) : "(none)"}`,
          `  fallback: ${route.fallback.map(label).join(", ") || "(none)"}`,
        ].join("\n"),
      );
    });

  models
    .command("set <CATEGORY> <PROVIDER> <MODEL>")
    .description("make a model the primary of a category; the previous primary becomes the first fallback")
    .option("--json", "machine-readable output")
    .action(async (category: string, provider: string, model: string, opts: { json?: boolean }) => {
      const { editableRouterFile, setRoute } = await import("../llm/routeEditor.ts");
      const result = setRoute(editableRouterFile(ctx.paths), category, provider, model);
      const running = await daemonRunning(ctx);
      output(ctx, opts.json, { ...result, daemon_running: running }, () =>
        [...describeRoute(result), result.changed ? applyHint(result.file, running) : "nothing changed"].join("\n"),
      );
    });

  models
    .command("remove-fallback <CATEGORY> <PROVIDER> <MODEL>")
    .description("remove one fallback model from a category's route")
    .option("--json", "machine-readable output")
    .action(async (category: string, provider: string, model: string, opts: { json?: boolean }) => {
      const { editableRouterFile, removeFallback } = await import("../llm/routeEditor.ts");
      const result = removeFallback(editableRouterFile(ctx.paths), category, provider, model);
      await printRouteEdit(
        ctx,
        opts.json,
        result,
        `removed ${provider}/${model} from the fallbacks of ${result.category}`,
      );
    });

  models
    .command("reset <CATEGORY>")
    .description("remove a category's entry from llm_router.yaml, so it uses the route it inherits (the default)")
    .option("--json", "machine-readable output")
    .action(async (category: string, opts: { json?: boolean }) => {
      const { editableRouterFile, resetRoute } = await import("../llm/routeEditor.ts");
      const result = resetRoute(editableRouterFile(ctx.paths), category);
      await printRouteEdit(ctx, opts.json, result, `${result.category}: entry removed, the inherited route applies`);
    });
}

async function printRouteEdit(ctx: CliContext, json: boolean | undefined, result: RouteEditResult, done: string) {
  const running = await daemonRunning(ctx);
  const { route } = result;
  output(ctx, json, { ...result, daemon_running: running }, () =>
    [
      result.changed ? done : `${result.category}: nothing to change`,
      `  primary:  ${route.primary ? label(route.primary) : "(none)"}`,
      `  fallback: ${route.fallback.map(label).join(", ") || "(none)"}`,
      ...(result.changed ? [applyHint(result.file, running)] : []),
    ].join("\n"),
  );
}

function registerModelsFetch(models: Command, ctx: CliContext): void {
  models
    .command("fetch")
    .description("ask every configured provider for its models' metadata and store it under model_options")
    .option("--json", "machine-readable output")
    .action(async (opts: { json?: boolean }) => {
      const [{ fetchModelOptions }, { effectiveEnv }, { openVault }] = await Promise.all([
        import("../llm/modelFetch.ts"),
        import("../config/envFile.ts"),
        import("../vault/vault.ts"),
      ]);
      const env = effectiveEnv(ctx.paths, ctx.env);
      const result = await fetchModelOptions(ctx.paths, env, openVault(ctx.paths, env));
      output(ctx, opts.json, result, () =>
        [
          ...result.providers.map((p) =>
            p.error ? `${p.provider}: unreachable (${p.error})` : `${p.provider}: ${plural(p.models, "model")}`,
          ),
          result.changed
            ? `Stored metadata of ${plural(result.models.length, "model")} in ${result.file} (model_options).`
            : `Nothing new to store in ${result.file}.`,
        ].join("\n"),
      );
    });
}

function label(target: RouteTargetRef): string {
  return `${target.provider}/${target.model}`;
}

function describeRoute(result: SetRouteResult): string[] {
  const was = result.previous.primary;
  const note = !was
    ? " (new route)"
    : label(was) === label(result.primary)
      ? ""
      : ` (was ${label(was)}, now the first fallback)`;
  return [
    `${result.category}: primary ${label(result.primary)}${note}`,
    `  fallback: ${result.fallback.map(label).join(", ") || "(none)"}`,
  ];
}

async function daemonRunning(ctx: CliContext): Promise<boolean> {
  const { processAlive, readDaemonInfo } = await import("../runtime/daemonInfo.ts");
  const info = readDaemonInfo(ctx.paths.daemonInfo);
  return info !== undefined && processAlive(info.pid);
}

/** The daemon reads the router file at start, so a change applies from its next start. */
function applyHint(file: string, running: boolean): string {
  return running
    ? `saved to ${file}; the daemon is running: restart it with \`assistant restart\` to apply the change`
    : `saved to ${file}; the daemon uses it from its next start`;
}

// ---- config provider -------------------------------------------------------------------------------------

function registerProviderCommands(provider: Command, ctx: CliContext): void {
  provider
    .command("list")
    .description("each provider: configured or not, URL, where its key comes from (never the key) and its users")
    .option("--json", "machine-readable output")
    .action(async (opts: { json?: boolean }) => {
      const [{ loadConfig }, { listProviders }, { effectiveEnv }, { openVault }] = await Promise.all([
        import("../config/configFiles.ts"),
        import("../llm/providerSettings.ts"),
        import("../config/envFile.ts"),
        import("../vault/vault.ts"),
      ]);
      const env = effectiveEnv(ctx.paths, ctx.env);
      const providers = listProviders(loadConfig("llm_router", ctx.paths), env, openVault(ctx.paths, env));
      output(ctx, opts.json, { providers }, () => formatProviders(providers));
    });

  const servers = [
    ["set-local-server", "local_server", "an Ollama server (Ollama's own API)", "http://localhost:11434"],
    [
      "set-lowbit-server",
      "lowbit_server",
      "an OpenAI-compatible server: llama-server, LM Studio, vLLM…",
      "http://localhost:8080/v1",
    ],
  ] as const;
  for (const [command, id, what, defaultUrl] of servers) {
    provider
      .command(command)
      .description(`use ${what}: checks the server, then sets providers.${id}.base_url`)
      .option("--url <url>", `the server's base URL (default ${defaultUrl})`)
      .option("--category <cat>", "also make it the primary of this category (needs --model)")
      .option("--model <model>", "the model for --category, one the server lists")
      .option("--no-probe", "save without asking the server (one that is not running yet)")
      .option("--json", "machine-readable output")
      .action(async (opts: ServerCommandOptions) => {
        const settings = await import("../llm/providerSettings.ts");
        const set = id === "local_server" ? settings.setLocalServer : settings.setLowbitServer;
        const change = await set(ctx.paths, opts);
        await printChange(ctx, opts.json, change, [`providers.${id}.base_url: ${change.base_url}`]);
      });
  }

  for (const id of ["cloud_a", "cloud_b"] as const) {
    const name = id.replace("_", "-");
    provider
      .command(`add-${name}`)
      .description(
        `use ${id}: its API key goes into the vault (read from standard input when piped), the router file refers to it`,
      )
      .option("--api-key <key>", "the key (prefer standard input: a key on the command line may stay in shell history)")
      .option("--url <url>", `another OpenAI-compatible endpoint than ${id}'s own; checked with the key before saving`)
      .option("--category <cat>", "also make it the primary of this category (needs --model)")
      .option("--model <model>", `the model for --category, as ${id} names it`)
      .option("--no-probe", "with --url: save without asking the endpoint")
      .option("--json", "machine-readable output")
      .action(async (opts: ServerCommandOptions & { apiKey?: string }) => {
        const [settings, { effectiveEnv }, { openVault }] = await Promise.all([
          import("../llm/providerSettings.ts"),
          import("../config/envFile.ts"),
          import("../vault/vault.ts"),
        ]);
        if (opts.apiKey !== undefined) {
          ctx.stderr.write(
            `warning: a key given on the command line may be kept in your shell history; prefer piping it: \`assistant config provider add-${name} < key.txt\`\n`,
          );
        }
        // Piped keys stay out of the shell history and the process list; on a terminal the vault must have it.
        const piped = opts.apiKey === undefined && !ctx.stdin.isTTY ? (await readStdin(ctx)).trim() : "";
        const apiKey = opts.apiKey ?? (piped || undefined);
        const vault = openVault(ctx.paths, effectiveEnv(ctx.paths, ctx.env));
        const options = { category: opts.category, model: opts.model, url: opts.url, probe: opts.probe, apiKey };
        const change =
          id === "cloud_a"
            ? await settings.addCloudA(ctx.paths, vault, options)
            : await settings.addCloudB(ctx.paths, vault, options);
        const keyName = change.api_key_ref?.slice("vault://".length);
        await printChange(ctx, opts.json, change, [
          change.key_stored ? `stored the ${id} API key in the vault as ${keyName}` : `using ${keyName} from the vault`,
          `providers.${id}.api_key_ref: ${change.api_key_ref}`,
          ...(change.base_url ? [`providers.${id}.base_url: ${change.base_url}`] : []),
        ]);
      });
  }
}

interface ServerCommandOptions {
  url?: string;
  category?: string;
  model?: string;
  probe: boolean;
  json?: boolean;
}

async function printChange(
  ctx: CliContext,
  json: boolean | undefined,
  change: ProviderChange,
  lines: string[],
): Promise<void> {
  const running = await daemonRunning(ctx);
  const { listed } = await import("../llm/serverCheck.ts");
  output(ctx, json, { ...change, daemon_running: running }, () => {
    const text = [...lines, ...(change.route ? describeRoute(change.route) : []), applyHint(change.file, running)];
    const server = change.server;
    if (!server) return text.join("\n");
    const api =
      server.protocol === "ollama"
        ? `Ollama's API${server.version ? ` (Ollama ${server.version})` : ""}`
        : "the OpenAI API";
    const found = `${change.base_url} answers ${api}; ${listed(server.models, server.protocol)}`;
    // Without a route the provider answers nothing yet: say how to make it answer chats.
    const model = server.models[0];
    const use = change.route || !model ? [] : [`to answer your chats with it: ${useCommand(change, model)}`];
    return [found, ...text, ...use].join("\n");
  });
}

function useCommand(change: ProviderChange, model: string): string {
  if (change.provider === "local_server" || change.provider === "lowbit_server") {
    const command = change.provider === "local_server" ? "set-local-server" : "set-lowbit-server";
    return `assistant config provider ${command} --url ${change.base_url} --category conversation --model ${model}`;
  }
  return `assistant config models set conversation ${change.provider} ${model}`;
}

function formatProviders(providers: ProviderStatus[]): string {
  const rows = providers.map((p) => [
    p.id,
    p.id.startsWith("assistant_") ? "built-in" : p.configured ? "yes" : "no",
    p.base_url ?? "-",
    p.key,
    p.used_by.join(", ") || "-",
  ]);
  return table([["PROVIDER", "CONFIGURED", "BASE URL", "KEY", "USED BY"], ...rows]);
}
