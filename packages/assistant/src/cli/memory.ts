import type { Command } from "commander";
import type { SearchHit } from "../memory/search.ts";
import type { MemoryOverview, MemorySettings } from "../memory/service.ts";
import type { MemoryRecord } from "../memory/store.ts";
import { type CliContext, output } from "./context.ts";

// `assistant memory ...`: the second brain over the daemon's HTTP API (the same service as the memory tools and
// the UIs' Memory views).

const BASE = "/api/memory/second-brain";
const KINDS = "fact, preference, person, project or decision";

export function registerMemoryCommands(program: Command, ctx: CliContext): void {
  const memory = program
    .command("memory")
    .description("the second brain: what the assistant remembers, learning on/off, search, remember, forget");
  const call = async <T>(what: string, method: "GET" | "POST" | "DELETE", path: string, body?: unknown) => {
    const { daemonRequest } = await import("./daemonClient.ts");
    return daemonRequest<T>(ctx, what, method, path, body);
  };
  const format = () => import("../memory/format.ts");

  memory
    .command("overview")
    .description("counts by kind, size, vectors, learning state and the most recent memories")
    .option("--recent <n>", "recent memories to show (0-100)", "10")
    .option("--json", "machine-readable output")
    .action(async (opts: { recent: string; json?: boolean }) => {
      const value = await call<MemoryOverview>(
        "the memory overview cannot be read",
        "GET",
        `${BASE}/overview?recent=${encodeURIComponent(opts.recent)}`,
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
      const query = new URLSearchParams({
        q: words.join(" "),
        limit: opts.limit,
        ...(opts.kind ? { kind: opts.kind } : {}),
      });
      const value = await call<{ items: SearchHit[] }>("memory search failed", "GET", `${BASE}/search?${query}`);
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
      const value = await call<{ memory: MemoryRecord; action: "created" | "updated" }>(
        "the memory was not stored",
        "POST",
        `${BASE}/items`,
        { content: words.join(" "), kind: opts.kind, ...(opts.subject !== undefined ? { subject: opts.subject } : {}) },
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
      const value = await call<{ removed: MemoryRecord }>(
        "the memory was not forgotten",
        "DELETE",
        `${BASE}/items/${encodeURIComponent(id)}`,
      );
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
      const value = await call<{ removed: number }>("memory was not cleared", "POST", `${BASE}/clear`);
      output(ctx, opts.json, value, () => `Cleared ${value.removed} memories.`);
    });
  for (const action of ["pause", "resume"] as const) {
    memory
      .command(action)
      .description(action === "pause" ? "pause learning from conversations" : "resume learning from conversations")
      .option("--json", "machine-readable output")
      .action(async (opts: { json?: boolean }) => {
        const value = await call<MemorySettings>(`learning was not ${action}d`, "POST", `${BASE}/settings`, {
          learning_enabled: action === "resume",
        });
        const { formatSettings } = await format();
        output(ctx, opts.json, value, () => formatSettings(value));
      });
  }
  memory
    .command("settings")
    .description("learning state, graph expansion and the embedder in use (or why search is text only)")
    .option("--json", "machine-readable output")
    .action(async (opts: { json?: boolean }) => {
      const value = await call<MemorySettings>("memory settings cannot be read", "GET", `${BASE}/settings`);
      const { formatSettings } = await format();
      output(ctx, opts.json, value, () => formatSettings(value));
    });
}
