import type { DataPaths } from "../config/paths.ts";
import { formatEmbedded, formatMetrics, formatModels, formatRoutes } from "../llm/format.ts";
import { listAllModels } from "../llm/models.ts";
import { editableRouterFile, listRoutes, setRoute } from "../llm/routeEditor.ts";
import type { LlmServices } from "../llm/service.ts";
import type { SessionStore } from "./sessions.ts";
import type { TaskService } from "./taskService.ts";

// Slash commands (SPEC.md): chat lines starting with "/" are commands, answered here and never sent to the LLM.
// One registry for every surface (CLI chat, web, TUI, channels); `/help` lists exactly what is registered.

export interface SlashContext {
  llm: LlmServices;
  paths: DataPaths;
  sessions: SessionStore;
  sessionId: string;
  agent: TaskService;
  status: () => string;
}

/** The reply, and the session the chat continues in when the command switched it (/newsession). */
export interface SlashResult {
  reply: string;
  sessionId?: string;
}

interface SlashCommand {
  names: string[];
  usage: string;
  summary: string;
  run: (args: string[], ctx: SlashContext) => Promise<string | SlashResult> | string | SlashResult;
}

const COMMANDS: SlashCommand[] = [
  {
    names: ["help", "?"],
    usage: "/help",
    summary: "list commands",
    run: () => helpText(),
  },
  {
    names: ["status"],
    usage: "/status",
    summary: "daemon status",
    run: (_args, ctx) => ctx.status(),
  },
  {
    names: ["newsession"],
    usage: "/newsession",
    summary: "start a new session (clears the short-term chat context)",
    run: (_args, ctx) => {
      const session = ctx.sessions.create();
      return {
        reply: `New session ${session.id}. Earlier messages are no longer sent to the model.`,
        sessionId: session.id,
      };
    },
  },
  {
    names: ["embedded"],
    usage: "/embedded [reload]",
    summary: "embedded model status; `reload` unloads its weights (they load again on the next request)",
    run: async (args, ctx) => {
      if (args.length === 0) return formatEmbedded(ctx.llm.embedded.state());
      if (args[0] === "reload" && args.length === 1) {
        await ctx.llm.embedded.unload();
        return "Embedded model unloaded; it loads again on the next request that needs it.";
      }
      return "usage: /embedded or /embedded reload";
    },
  },
  {
    names: ["metrics"],
    usage: "/metrics",
    summary: "LLM router metrics",
    run: (_args, ctx) => formatMetrics(ctx.llm.metrics.snapshot()),
  },
  {
    names: ["routes"],
    usage: "/routes",
    summary: "primary and fallback model per category",
    run: (_args, ctx) => formatRoutes(listRoutes(ctx.llm.router.configuration)),
  },
  {
    names: ["models"],
    usage: "/models [list | set <CATEGORY> <PROVIDER> <MODEL>]",
    summary: "all models of the configured providers; `list` shows the routes; `set` changes a category's model",
    run: async (args, ctx) => {
      if (args.length === 0) return formatModels(await listAllModels(ctx.llm.router));
      if (args[0] === "list" && args.length === 1) return formatRoutes(listRoutes(ctx.llm.router.configuration));
      if (args[0] === "set" && args.length === 4) {
        const result = setRoute(editableRouterFile(ctx.paths), args[1]!, args[2]!, args[3]!);
        ctx.llm.router.reload();
        const fallback = result.fallback.map((t) => `${t.provider}/${t.model}`).join(", ") || "none";
        return `${result.category} now uses ${result.primary.provider}/${result.primary.model} (fallback: ${fallback}); saved to ${result.file}.`;
      }
      return "usage: /models, /models list, or /models set <CATEGORY> <PROVIDER> <MODEL>";
    },
  },
];

function helpText(): string {
  const width = Math.max(...COMMANDS.map((c) => c.usage.length));
  return ["Commands:", ...COMMANDS.map((c) => `  ${c.usage.padEnd(width)}  ${c.summary}`)].join("\n");
}

/** Splits a command line into words; double quotes group words ("a b" is one argument). */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  for (const match of line.matchAll(/"((?:[^"\\]|\\.)*)"|(\S+)/g)) {
    words.push(match[1] !== undefined ? match[1].replace(/\\(.)/g, "$1") : match[2]!);
  }
  return words;
}

/** Runs one slash command line; errors (a refused route edit...) become the reply so the chat goes on. */
export async function runSlashCommand(line: string, ctx: SlashContext): Promise<SlashResult> {
  const [head = "", ...args] = splitCommandLine(line.trim().slice(1));
  const command = COMMANDS.find((c) => c.names.includes(head.toLowerCase()));
  if (!command) return { reply: `Unknown command /${head}. /help lists the commands.` };
  try {
    const result = await command.run(args, ctx);
    return typeof result === "string" ? { reply: result } : result;
  } catch (error) {
    return { reply: `/${head} failed: ${error instanceof Error ? error.message : String(error)}` };
  }
}
