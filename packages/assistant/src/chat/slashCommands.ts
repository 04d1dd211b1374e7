import type { SlashResult } from "../agent/conversation.ts";
import type { SessionStore } from "../agent/sessions.ts";
import type { TaskService } from "../agent/taskService.ts";
import type { DataPaths } from "../config/paths.ts";
import { adviceFor } from "../doctor/advice.ts";
import { formatChecks } from "../doctor/format.ts";
import { runChecks } from "../doctor/runChecks.ts";
import type { DaemonSelf } from "../doctor/types.ts";
import { formatEmbedded, formatMetrics, formatModels, formatRoutes } from "../llm/format.ts";
import { listAllModels } from "../llm/models.ts";
import { editableRouterFile, listRoutes, setRoute } from "../llm/routeEditor.ts";
import type { LlmServices } from "../llm/services.ts";
import { formatPluginReload, formatPlugins } from "../plugins/format.ts";
import type { PluginRegistry } from "../plugins/registry.ts";
import { formatCadence, formatSchedule, formatSchedules } from "../scheduler/format.ts";
import { intervalProblem, parseInterval } from "../scheduler/interval.ts";
import type { Scheduler } from "../scheduler/scheduler.ts";
import { getEnvSetting, listEnvSettings, MASKED, setEnvSetting } from "../setup/envSettings.ts";
import { formatReload, formatSkills } from "../skills/format.ts";
import type { SkillRegistry } from "../skills/registry.ts";
import type { Vault } from "../vault/vault.ts";

// Slash commands (docs/models.md#slash-commands-available-now): chat lines starting with "/" are commands, answered
// here and never sent to the LLM. One registry for every surface (CLI chat, web, TUI, channels); `/help` lists exactly
// what is registered.

export interface SlashContext {
  llm: LlmServices;
  paths: DataPaths;
  sessions: SessionStore;
  sessionId: string;
  agent: TaskService;
  status: () => string;
  /** The daemon's environment (env files applied), for /doctor. */
  env: NodeJS.ProcessEnv;
  /** Secret names for /vault list (never values). */
  vault: Pick<Vault, "list">;
  /** Who the daemon is, so the /doctor port check recognises it. */
  self?: () => DaemonSelf;
  skills: Pick<SkillRegistry, "list" | "invalid" | "reload" | "uninstall">;
  plugins: Pick<PluginRegistry, "list" | "invalid" | "reload">;
  /** The scheduler, which the daemon creates after the agent (hence a getter). */
  scheduler: () => Pick<Scheduler, "list" | "create" | "delete" | "pause" | "resume">;
  /** Only under the supervisor (`assistant start`): stops the daemon so the supervisor starts it again at once. */
  restart?: () => void;
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
    usage: "/embedded [reload|calibrate]",
    summary:
      "embedded model status and thread calibration; `reload` unloads its weights (they load again on the next request), `calibrate` measures the fastest thread count again",
    run: async (args, ctx) => {
      if (args.length === 0) return formatEmbedded(ctx.llm.embedded.state());
      if (args[0] === "reload" && args.length === 1) {
        await ctx.llm.embedded.unload();
        return "Embedded model unloaded; it loads again on the next request that needs it.";
      }
      if (args[0] === "calibrate" && args.length === 1) {
        try {
          await ctx.llm.embedded.calibrate();
        } catch (error) {
          return `Cannot calibrate the embedded model: ${(error as Error).message}`;
        }
        return formatEmbedded(ctx.llm.embedded.state());
      }
      return "usage: /embedded, /embedded reload or /embedded calibrate";
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
  {
    names: ["task"],
    usage: '/task create "<message>"',
    summary: "run a message as a background task in a new session (the chat is not blocked)",
    run: (args, ctx) => {
      const message = args.slice(1).join(" ").trim();
      if (args[0] !== "create" || !message) return 'usage: /task create "<message>"';
      const task = ctx.agent.submit({ message, origin: "slash" });
      return [
        `Task ${task.id} created (session ${task.session_id}).`,
        `Watch it with \`assistant task watch ${task.id}\`; stop it with /cancel ${task.id}.`,
      ].join("\n");
    },
  },
  {
    names: ["schedule"],
    usage: '/schedule [list | create <NAME> <INTERVAL> "<description>" | delete|pause|resume <ID>]',
    summary: "recurring schedules: each run sends the description as a task in the schedule's own session",
    run: (args, ctx) => scheduleCommand(args, ctx),
  },
  {
    names: ["cancel", "stop"],
    usage: "/cancel <TASK_ID>, /stop <TASK_ID>",
    summary: "cancel a queued or running task",
    run: (args, ctx) => {
      if (args.length !== 1) return "usage: /cancel <TASK_ID> (or /stop <TASK_ID>)";
      const task = ctx.agent.cancel(args[0]!, "cancelled from the chat");
      return task.status === "cancelled"
        ? `Task ${task.id} cancelled.`
        : `Task ${task.id} is being cancelled (it was ${task.status}).`;
    },
  },
  {
    names: ["doctor"],
    usage: "/doctor",
    summary: "health checks of the data directory, config, port, database and embedded model",
    run: async (_args, ctx) => formatChecks(await checks(ctx)),
  },
  {
    names: ["advice"],
    usage: "/advice",
    summary: "the health checks with a to-do list of what to fix",
    run: async (_args, ctx) => {
      const results = await checks(ctx);
      return [formatChecks(results), "", "Advice:", ...adviceFor(results).map((line) => `  - ${line}`)].join("\n");
    },
  },
  {
    names: ["config"],
    usage: "/config list | get <KEY> | set <KEY> <value>",
    summary: "variables of assistant.env and connectors.env (secrets live in the vault and are masked here)",
    run: (args, ctx) => {
      const [action, key, ...rest] = args;
      if (action === "list" && args.length === 1) {
        const variables = listEnvSettings(ctx.paths);
        if (variables.length === 0) return "No variables set in assistant.env or connectors.env.";
        return variables.map((v) => `${v.key}=${shown(v)}  (${v.source})`).join("\n");
      }
      if (action === "get" && key && rest.length === 0) {
        const setting = getEnvSetting(ctx.paths, key);
        return setting ? `${key}=${shown(setting)}` : `${key} is not set in assistant.env or connectors.env.`;
      }
      if (action === "set" && key && rest.length > 0) {
        const { file } = setEnvSetting(ctx.paths, key, rest.join(" "));
        const how = ctx.restart ? "/restart" : "`assistant restart`";
        return `Set ${key} in ${file}. A restart may be needed for the daemon to use it (${how}).`;
      }
      return "usage: /config list, /config get <KEY>, or /config set <KEY> <value>";
    },
  },
  {
    names: ["vault"],
    usage: "/vault list",
    summary: "names of the secrets in the vault (never their values)",
    run: (args, ctx) => {
      if (args.length !== 1 || args[0] !== "list") return "usage: /vault list";
      const names = ctx.vault.list();
      if (names.length === 0) return "The vault is empty (`assistant vault set <name>` adds a secret).";
      return ["Secrets in the vault:", ...names.map((name) => `  ${name}`)].join("\n");
    },
  },
  {
    names: ["skills"],
    usage: "/skills [list|reload|uninstall <name>]",
    summary: "installed skills; rescan the skills folder; remove a skill",
    run: (args, ctx) => {
      const [sub = "list", name, ...rest] = args;
      if (sub === "list" && name === undefined)
        return formatSkills(ctx.skills.list(), ctx.skills.invalid(), "/skills reload");
      if (sub === "reload" && name === undefined) return formatReload(ctx.skills.reload());
      if (sub === "uninstall" && name !== undefined && rest.length === 0) {
        ctx.skills.uninstall(name);
        return `Skill ${name} removed.`;
      }
      return "usage: /skills [list|reload|uninstall <name>]";
    },
  },
  {
    names: ["plugins"],
    usage: "/plugins",
    summary: "installed plugins with their reputation",
    run: (args, ctx) =>
      args.length === 0 ? formatPlugins(ctx.plugins.list(), ctx.plugins.invalid()) : "usage: /plugins",
  },
  {
    names: ["reload"],
    usage: "/reload",
    summary: "reload plugins (no daemon restart)",
    run: async (args, ctx) => (args.length === 0 ? formatPluginReload(await ctx.plugins.reload()) : "usage: /reload"),
  },
  {
    names: ["restart"],
    usage: "/restart",
    summary: "restart the daemon (only when it runs under `assistant start`)",
    run: (_args, ctx) => {
      if (!ctx.restart) {
        return "/restart only works when the daemon runs under the supervisor (`assistant start`); this one does not: stop it and start it again.";
      }
      ctx.restart();
      return "Restarting... the daemon is back in a few seconds; running tasks are cancelled, queued ones run after the restart.";
    },
  },
];

const SCHEDULE_USAGE = [
  "usage:",
  "  /schedule or /schedule list",
  '  /schedule create <NAME> <INTERVAL> "<description>"   (NAME one word or quoted; INTERVAL 3600, 90s, 30m, 1h...)',
  "  /schedule delete <SCHEDULE_ID>, /schedule pause <SCHEDULE_ID>, /schedule resume <SCHEDULE_ID>",
].join("\n");

function scheduleCommand(args: string[], ctx: SlashContext): string {
  const [sub = "list", ...rest] = args;
  const scheduler = ctx.scheduler();
  if (sub === "list" && rest.length === 0) {
    return formatSchedules(scheduler.list({ limit: 500 }).items, '/schedule create <NAME> <INTERVAL> "<description>"');
  }
  if (sub === "create") {
    const [name, interval, ...words] = rest;
    const description = words.join(" ").trim();
    if (!name || !interval || !description) return SCHEDULE_USAGE;
    const seconds = parseInterval(interval);
    if (seconds === undefined) return `${intervalProblem(interval).replace(/^t/, "T")}.\n${SCHEDULE_USAGE}`;
    const created = scheduler.create({ name, description, interval_secs: seconds });
    return [
      `Schedule ${created.id} created: "${created.name}" ${formatCadence(created)}, first run at ${created.next_run_at}.`,
      `Each run is a task in session ${created.session_id}; remove it with /schedule delete ${created.id}.`,
    ].join("\n");
  }
  if (rest.length === 1 && rest[0]) {
    const id = rest[0];
    if (sub === "delete") return `Schedule ${scheduler.delete(id).name} (${id}) deleted.`;
    if (sub === "pause") return `Paused:\n${formatSchedule(scheduler.pause(id))}`;
    if (sub === "resume") return `Resumed:\n${formatSchedule(scheduler.resume(id))}`;
  }
  return SCHEDULE_USAGE;
}

/** The doctor's checks as the running daemon sees them (same service as `assistant doctor` and GET /api/doctor). */
function checks(ctx: SlashContext) {
  return runChecks(ctx.paths, ctx.env, ctx.self ? { self: ctx.self() } : {});
}

/** A /config value: masked when it looks like a secret (the chat may be read on other devices). */
function shown(setting: { key: string; value: string; secret: boolean }): string {
  return setting.secret || /_KEY$/i.test(setting.key) ? MASKED : setting.value;
}

/** /help fits an 80-column terminal: summaries in a column at 24, a longer usage on lines of its own above it. */
const HELP_WIDTH = 80;
const SUMMARY_COLUMN = 24;

/** `text` in lines of at most HELP_WIDTH characters: the first starts with `first`, the others with `rest`. */
function wrap(text: string, first: string, rest: string): string[] {
  const lines: string[] = [];
  let line = first;
  for (const word of text.split(" ")) {
    const start = line === first || line === rest;
    if (!start && line.length + 1 + word.length > HELP_WIDTH) {
      lines.push(line);
      line = rest + word;
    } else line += start ? word : ` ${word}`;
  }
  return [...lines, line];
}

function helpText(): string {
  const column = " ".repeat(SUMMARY_COLUMN);
  const lines = ["Commands:"];
  for (const { usage, summary } of COMMANDS) {
    if (usage.length <= SUMMARY_COLUMN - 4)
      lines.push(...wrap(summary, `  ${usage.padEnd(SUMMARY_COLUMN - 2)}`, column));
    else lines.push(...wrap(usage, "  ", "    "), ...wrap(summary, column, column));
  }
  lines.push("", "In `assistant chat`, /exit (or Ctrl-D) leaves the chat.");
  return lines.join("\n");
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
