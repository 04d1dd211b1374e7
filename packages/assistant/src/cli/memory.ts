import type { Command } from "commander";
import { plural } from "../util/plural.ts";
import { type CliContext, output } from "./context.ts";
import { asTyped, callDaemon } from "./daemonClient.ts";

// `assistant memory ...`: the second brain over the daemon's HTTP API (the same service as the memory tools and
// the UIs' Memory views).

const KINDS = "fact, preference, person, project or decision";

export function registerMemoryCommands(program: Command, ctx: CliContext): void {
  const memory = program
    .command("memory")
    .description("the second brain: what the assistant remembers, learning on/off, search, remember, forget");
  const format = () => import("../memory/format.ts");

  memory
    .command("overview")
    .description("counts by kind, size, vectors, learning state and the most recent memories")
    .option("--recent <n>", "recent memories to show (0-100)", "10")
    .option("--json", "machine-readable output")
    .action(async (opts: { recent: string; json?: boolean }) => {
      const value = await callDaemon(ctx, "the memory overview cannot be read", (client) =>
        client.getMemoryOverview({ recent: asTyped(opts.recent) }),
      );
      const { formatOverview } = await format();
      output(ctx, opts.json, value, () => formatOverview(value));
    });
  memory
    .command("search <query...>")
    .description("hybrid search (text, meaning, recency), best first")
    .option("--kind <kind>", `only memories of this kind (${KINDS})`)
    .option("--limit <n>", "results (1-100)", "10")
    .option("--json", "machine-readable output")
    .action(async (words: string[], opts: { kind?: string; limit: string; json?: boolean }) => {
      const value = await callDaemon(ctx, "memory search failed", (client) =>
        client.searchMemory({
          q: words.join(" "),
          limit: asTyped(opts.limit),
          ...(opts.kind ? { kind: asTyped(opts.kind) } : {}),
        }),
      );
      const { formatHits } = await format();
      output(ctx, opts.json, value, () => formatHits(value.items));
    });
  memory
    .command("remember <content...>")
    .description("store a memory yourself (deduplicated like learned ones)")
    .option("--kind <kind>", KINDS, "fact")
    .option("--subject <subject>", "what it is about; a new memory of the same kind and subject replaces the old one")
    .option("--json", "machine-readable output")
    .action(async (words: string[], opts: { kind: string; subject?: string; json?: boolean }) => {
      const value = await callDaemon(ctx, "the memory was not stored", (client) =>
        client.createMemory({
          content: words.join(" "),
          kind: asTyped(opts.kind),
          ...(opts.subject !== undefined ? { subject: opts.subject } : {}),
        }),
      );
      const { formatMemory } = await format();
      output(
        ctx,
        opts.json,
        value,
        () => `${value.action === "created" ? "Remembered" : "Updated"}:\n${formatMemory(value.memory)}`,
      );
    });
  memory
    .command("forget <id>")
    .description("delete one memory (ids come from search or overview)")
    .option("--json", "machine-readable output")
    .action(async (id: string, opts: { json?: boolean }) => {
      const value = await callDaemon(ctx, "the memory was not forgotten", (client) => client.deleteMemory(id));
      output(ctx, opts.json, value, () => `Forgot ${value.removed.id}: ${value.removed.content}`);
    });
  memory
    .command("clear")
    .description("delete every memory (conversations already read are not learned again)")
    .option("--yes", "confirm: this cannot be undone")
    .option("--json", "machine-readable output")
    .action(async (opts: { yes?: boolean; json?: boolean }) => {
      if (!opts.yes) {
        const { AppError } = await import("../util/errors.ts");
        throw new AppError(
          "invalid_request",
          "this deletes every memory and cannot be undone: run it again with --yes",
        );
      }
      const value = await callDaemon(ctx, "memory was not cleared", (client) => client.clearMemory());
      output(ctx, opts.json, value, () => `Cleared ${plural(value.removed, "memory", "memories")}.`);
    });
  for (const action of ["pause", "resume"] as const) {
    memory
      .command(action)
      .description(action === "pause" ? "pause learning from conversations" : "resume learning from conversations")
      .option("--json", "machine-readable output")
      .action(async (opts: { json?: boolean }) => {
        const value = await callDaemon(ctx, `learning was not ${action}d`, (client) =>
          client.setMemorySettings({ learning_enabled: action === "resume" }),
        );
        const { formatSettings } = await format();
        output(ctx, opts.json, value, () => formatSettings(value));
      });
  }
  memory
    .command("settings")
    .description("learning state, graph expansion and the embedder in use (or why search is text only)")
    .option("--json", "machine-readable output")
    .action(async (opts: { json?: boolean }) => {
      const value = await callDaemon(ctx, "memory settings cannot be read", (client) => client.getMemorySettings());
      const { formatSettings } = await format();
      output(ctx, opts.json, value, () => formatSettings(value));
    });
}
