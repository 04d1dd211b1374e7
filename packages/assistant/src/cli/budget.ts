import { type Command, InvalidArgumentError } from "commander";
import { type CliContext, output } from "./context.ts";
import { callDaemon } from "./daemonClient.ts";

// `assistant budget [show] | set | reset`: the token and cost limits per chat session and each session's usage
// (docs/models.md#metrics-and-budget) over the daemon's HTTP API.

/** `--tokens`/`--cost`: a number above 0, or `none` to clear a limit set here (the environment's applies again). */
function limit(whole: boolean) {
  // "none" stays a word until the request: commander turns a parser's null into "".
  return (typed: string): number | "none" => {
    if (typed === "none") return typed;
    const value = Number(typed);
    if (!/^\d+(\.\d+)?$/.test(typed) || value <= 0 || (whole && !Number.isInteger(value))) {
      throw new InvalidArgumentError(`expected ${whole ? "a whole number" : "a number"} above 0, or none`);
    }
    return value;
  };
}

const orNull = (value: number | "none"): number | null => (value === "none" ? null : value);

export function registerBudgetCommands(program: Command, ctx: CliContext): void {
  const budget = program
    .command("budget")
    .description("token and cost limits per chat session, and what each session has used");
  const showStatus = async (json: boolean | undefined) => {
    const value = await callDaemon(ctx, "the budget cannot be read", (client) => client.getBudget());
    const { formatBudget } = await import("../llm/format.ts");
    output(ctx, json, value, () => formatBudget(value));
  };
  budget
    .command("show", { isDefault: true })
    .description("the limits (and where each comes from) and the usage of every session (the default)")
    .option("--json", "machine-readable output")
    .action((opts: { json?: boolean }) => showStatus(opts.json));
  const set = budget
    .command("set")
    .description("set the limits every session gets; `none` clears one (the environment's applies again)")
    .option("--tokens <n>", "tokens (in + out) a session may use, or none", limit(true))
    .option("--cost <usd>", "estimated US dollars a session may spend, or none", limit(false))
    .option("--json", "machine-readable output")
    .action(async (opts: { tokens?: number | "none"; cost?: number | "none"; json?: boolean }) => {
      if (opts.tokens === undefined && opts.cost === undefined) {
        set.error("error: give --tokens and/or --cost");
      }
      const value = await callDaemon(ctx, "the budget was not changed", (client) =>
        client.setBudgetLimits({
          ...(opts.tokens !== undefined ? { max_tokens_per_session: orNull(opts.tokens) } : {}),
          ...(opts.cost !== undefined ? { max_cost_per_session_usd: orNull(opts.cost) } : {}),
        }),
      );
      const { formatBudget } = await import("../llm/format.ts");
      output(ctx, opts.json, value, () => `Limits saved.\n${formatBudget(value)}`);
    });
  const reset = budget
    .command("reset")
    .description("forget the usage of one session (--session) or of every session (--all)")
    .option("--session <id>", "the session whose usage is forgotten")
    .option("--all", "every session")
    .option("--json", "machine-readable output")
    .action(async (opts: { session?: string; all?: boolean; json?: boolean }) => {
      if (!opts.session === !opts.all) reset.error("error: give either --session <id> or --all");
      const value = await callDaemon(ctx, "no usage was reset", (client) =>
        client.resetBudgetUsage(opts.session ? { session_id: opts.session } : {}),
      );
      output(ctx, opts.json, value, () =>
        opts.session
          ? `Reset the usage of session ${opts.session} (${value.reset === 0 ? "it had none" : "done"}).`
          : `Reset the usage of ${value.reset} session${value.reset === 1 ? "" : "s"}.`,
      );
    });
}
