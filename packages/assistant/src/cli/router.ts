import type { Command } from "commander";
import { AppError } from "../util/errors.ts";
import { plural } from "../util/plural.ts";
import { type CliContext, output } from "./context.ts";
import { callDaemon } from "./daemonClient.ts";

// `assistant router metrics|embedded|discover|show` and `assistant discover`. Metrics and the embedded model live in
// the running daemon; discovery and `show` work on this machine and the router file without it.

export function registerRouterCommands(program: Command, ctx: CliContext): void {
  const router = program.command("router").description("LLM router: metrics, local model servers, model details");

  router
    .command("metrics")
    .description("calls, failures, retries, fallbacks, latency, tokens and cost per provider/model (daemon must be up)")
    .option("--json", "machine-readable output")
    .action(async (opts: { json?: boolean }) => {
      const { formatMetrics } = await import("../llm/format.ts");
      const snapshot = await callDaemon(ctx, "there are no router metrics", (client) => client.getRouterMetrics());
      output(ctx, opts.json, snapshot, () => formatMetrics(snapshot));
    });

  router
    .command("embedded")
    .description("the embedded model: state, threads and their calibration (daemon must be up)")
    .option("--calibrate", "measure the fastest thread count again now (a few seconds)")
    .option("--json", "machine-readable output")
    .action(async (opts: { calibrate?: boolean; json?: boolean }) => {
      const { formatEmbedded } = await import("../llm/format.ts");
      if (opts.calibrate) {
        await callDaemon(ctx, "cannot calibrate the embedded model", (client) => client.calibrateEmbeddedModel());
      }
      const state = await callDaemon(ctx, "there is no embedded model state", (client) => client.getEmbeddedModel());
      output(ctx, opts.json, state, () => formatEmbedded(state));
    });

  const discover = (command: Command) =>
    command
      .option(
        "--url <url>",
        "also ask the server at this URL (repeatable)",
        (url: string, urls: string[]) => [...urls, url],
        [],
      )
      .option("--json", "machine-readable output")
      .action(async (opts: { url: string[]; json?: boolean }) => {
        const [{ defaultCandidates, discoverLocalServers }, { effectiveEnv }, { loadConfig }] = await Promise.all([
          import("../llm/discover.ts"),
          import("../config/envFile.ts"),
          import("../config/configFiles.ts"),
        ]);
        const env = effectiveEnv(ctx.paths, ctx.env);
        let config: import("../config/schemas/llmRouter.ts").LlmRouterConfig | undefined;
        try {
          config = loadConfig("llm_router", ctx.paths);
        } catch (error) {
          // Discovery helps most when the file is wrong: go on with the other candidates and say why.
          ctx.stderr.write(`warning: the servers of llm_router.yaml are not asked: ${(error as Error).message}\n`);
        }
        const found = await discoverLocalServers(env, { candidates: defaultCandidates(env, config, opts.url) });
        output(ctx, opts.json, found, () => formatDiscovery(found));
      });
  discover(
    router
      .command("discover")
      .description(
        "find model servers (Ollama, llama-server, LM Studio, vLLM, those in llm_router.yaml) and how to use each",
      ),
  );
  discover(
    program.command("discover").description("find local model servers on this machine (same as router discover)"),
  );

  router
    .command("show")
    .description("what the router knows about a model: metadata, price, and the routes that use it")
    .argument("<MODEL>", "model name as written in llm_router.yaml")
    .option("--json", "machine-readable output")
    .action(async (model: string, opts: { json?: boolean }) => {
      const { loadConfig } = await import("../config/configFiles.ts");
      const { describeModel } = await import("../llm/modelDetails.ts");
      const details = describeModel(loadConfig("llm_router", ctx.paths), model);
      if (details.routes.length === 0 && !details.options) {
        throw new AppError(
          "not_found",
          `no route and no model_options entry names "${model}"; \`assistant config models routes\` lists the routes, \`assistant config models fetch\` fills model_options`,
        );
      }
      output(ctx, opts.json, details, () => formatDetails(details));
    });
}

function formatDiscovery(found: import("../llm/discover.ts").DiscoveredServer[]): string {
  const width = Math.max(...found.map((server) => server.base_url.length));
  const lines = found.flatMap((server) => {
    const head = `${server.provider.padEnd(13)}  ${server.base_url.padEnd(width)}  `;
    if (!server.reachable) return [`${head}no model server: ${server.error ?? "no answer"} (${server.source})`];
    const kind =
      server.provider === "local_server" ? `Ollama${server.version ? ` ${server.version}` : ""}` : "OpenAI-compatible";
    const models = server.models.length
      ? `${plural(server.models.length, "model")}: ${server.models.join(", ")}`
      : "no models listed yet";
    return [`${head}${kind}, ${models} (${server.source})`, `  use this server: ${server.use}`];
  });
  lines.push(
    "",
    found.some((server) => server.reachable)
      ? "Run a `use this server` command as printed to make that server answer your chats (another of its models: change --model)."
      : 'No model server found. Start one (docs/models.md, "Use the model server you already run"), or ask one elsewhere: assistant discover --url http://HOST:PORT',
  );
  return lines.join("\n");
}

function formatDetails(details: import("../llm/modelDetails.ts").ModelDetails): string {
  const lines = [`Model ${details.model}`];
  if (details.options) {
    for (const [key, value] of Object.entries(details.options)) lines.push(`  ${key}: ${JSON.stringify(value)}`);
  } else lines.push("  no model_options entry (`assistant config models fetch` fills it)");
  lines.push(
    details.price
      ? `  price: $${details.price.inputPerMTok}/M input tokens, $${details.price.outputPerMTok}/M output tokens`
      : "  price: unknown",
  );
  if (details.routes.length === 0) lines.push("  used by no route");
  for (const route of details.routes) lines.push(`  ${route.role} of ${route.category} (provider ${route.provider})`);
  return lines.join("\n");
}
