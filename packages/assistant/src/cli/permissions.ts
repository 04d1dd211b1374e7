import type { AssistantClient, Decision, EffectiveTools, QueueItem } from "@assistant/client";
import type { Command } from "commander";
import { AppError } from "../util/errors.ts";
import { type CliContext, output } from "./context.ts";
import { asTyped, callDaemon, connectDaemon, withDaemon } from "./daemonClient.ts";

// `assistant permissions queue|decisions|mode`: the review queue, persistent decisions and approval mode live in
// the running daemon, so every command talks to it (docs/cli.md#permissions).

const STATUSES = ["pending", "approved", "denied", "expired"] as const;
const MODES = ["ask_me", "allow_all"] as const;
const PAGE = 500;

/** Follows next_cursor to the end (the CLI shows the whole list). */
async function allPages<T>(
  ctx: CliContext,
  what: string,
  page: (
    client: AssistantClient,
    cursor: { cursor: string } | undefined,
  ) => Promise<{ items: T[]; next_cursor: string | null }>,
): Promise<T[]> {
  const client = await connectDaemon(ctx, what);
  const items: T[] = [];
  let cursor: string | null = null;
  do {
    const from: { cursor: string } | undefined = cursor ? { cursor } : undefined;
    const next: { items: T[]; next_cursor: string | null } = await withDaemon(what, () => page(client, from));
    items.push(...next.items);
    cursor = next.next_cursor;
  } while (cursor);
  return items;
}

export function registerPermissionsCommands(program: Command, ctx: CliContext): void {
  const permissions = program
    .command("permissions")
    .description("review queue of sensitive tool calls, persistent decisions, approval mode (daemon must be up)");

  const queue = permissions.command("queue").description("tool calls waiting for your approval");
  queue
    .command("list")
    .description("review queue items, newest first")
    .option("--status <status>", `only items in this state (${STATUSES.join(", ")})`)
    .option("--json", "machine-readable output")
    .action(async (opts: { status?: string; json?: boolean }, command: Command) => {
      const status = STATUSES.find((known) => known === opts.status);
      if (opts.status !== undefined && !status) {
        command.error(`error: --status must be one of ${STATUSES.join(", ")} (got "${opts.status}")`);
      }
      const items = await allPages<QueueItem>(ctx, "the review queue cannot be listed", (client, from) =>
        client.listQueueItems({ ...(status ? { status } : {}), limit: PAGE, ...from }),
      );
      output(ctx, opts.json, items, () => formatQueue(items, opts.status));
    });
  for (const action of ["approve", "deny", "expire"] as const) {
    const command = queue
      .command(action)
      .description(
        action === "approve"
          ? "approve a pending item: the action may continue"
          : action === "deny"
            ? "deny a pending item: the action is blocked with feedback"
            : "expire a pending item",
      )
      .argument("<id>", "queue item id (`assistant permissions queue list`)")
      .option("--note <text>", "a note for the record (at most 2000 characters)")
      .option("--json", "machine-readable output");
    if (action === "approve") {
      command.option("--always", "also let this tool run on the same scope without asking from now on");
    }
    command.action(async (itemId: string, opts: { note?: string; always?: boolean; json?: boolean }) => {
      const body = {
        ...(opts.note !== undefined ? { note: opts.note } : {}),
        ...(opts.always ? { always: true } : {}),
      };
      const item = await callDaemon(ctx, `item ${itemId} cannot be changed`, (client) =>
        action === "approve"
          ? client.approveQueueItem(itemId, body)
          : action === "deny"
            ? client.denyQueueItem(itemId, body)
            : client.expireQueueItem(itemId, body),
      );
      output(ctx, opts.json, item, () => {
        const line = `${item.id} ${item.status} (${item.tool})${item.note ? `: ${item.note}` : ""}`;
        const decision = "decision" in item ? (item.decision as Decision | null) : null;
        return decision
          ? `${line}\nfrom now on ${decision.tool} on ${decision.scope} runs without asking (decision ${decision.id})`
          : line;
      });
    });
  }

  const decisions = permissions.command("decisions").description("persistent allow/deny rules by tool and scope");
  decisions
    .command("list")
    .description("every persistent decision")
    .option("--json", "machine-readable output")
    .action(async (opts: { json?: boolean }) => {
      const items = await allPages(ctx, "the decisions cannot be listed", (client, from) =>
        client.listDecisions({ limit: PAGE, ...from }),
      );
      output(ctx, opts.json, items, () =>
        items.length === 0
          ? "no persistent decisions"
          : items.map((d) => `${d.id}  ${d.effect.padEnd(5)}  ${d.tool}  ${d.scope}`).join("\n"),
      );
    });
  decisions
    .command("add")
    .description("adds a rule: scope is a command name, a path prefix, a domain, or *")
    .argument("<tool>", "tool name, or *")
    .argument("<scope>", "command name, path prefix, domain, or *")
    .argument("<effect>", "allow or deny")
    .option("--json", "machine-readable output")
    .action(async (tool: string, scope: string, effect: string, opts: { json?: boolean }) => {
      const client = await connectDaemon(ctx, "no decision can be added");
      const decision = await withDaemon("no decision can be added", () =>
        client.createDecision({ tool, scope, effect: asTyped(effect) }),
      );
      output(
        ctx,
        opts.json,
        decision,
        () => `added ${decision.id}: ${decision.effect} ${decision.tool} ${decision.scope}`,
      );
      if (decision.effect === "allow") {
        const view = await withDaemon("the policy cannot be read", () => client.getEffectiveTools());
        ctx.stderr.write(`note: ${allowDecisionNote(decision, view)}\n`);
      }
    });
  decisions
    .command("delete")
    .description("deletes a rule")
    .argument("<id>", "decision id (`assistant permissions decisions list`)")
    .option("--json", "machine-readable output")
    .action(async (decisionId: string, opts: { json?: boolean }) => {
      const result = await callDaemon(ctx, "no decision can be deleted", (client) => client.deleteDecision(decisionId));
      output(ctx, opts.json, result, () => `deleted ${result.id}`);
    });

  permissions
    .command("mode")
    .description("shows the global approval mode, or sets it (ask_me or allow_all)")
    .argument("[mode]", MODES.join(" or "))
    .option("--yes", "allow_all without asking (for scripts)")
    .option("--json", "machine-readable output")
    .addHelpText("after", `\n${ALLOW_ALL_MEANS}`)
    .action(async (mode: string | undefined, opts: { yes?: boolean; json?: boolean }, command: Command) => {
      const known = MODES.find((name) => name === mode);
      if (mode !== undefined && !known) command.error(`error: mode must be ${MODES.join(" or ")} (got "${mode}")`);
      if (known === "allow_all" && !opts.yes) {
        // Every sensitive call would run unasked from now on, also after a restart: the person says so.
        ctx.stderr.write(`${ALLOW_ALL_MEANS}\nTurn it on? [y/N] `);
        const { isYes } = await import("./chat.ts");
        if (!isYes(await readLine(ctx))) {
          ctx.stderr.write("\n");
          throw new AppError(
            "invalid_request",
            "the approval mode is unchanged (ask_me); `--yes` confirms without asking",
          );
        }
      }
      const result = await callDaemon(ctx, "the approval mode is not available", (client) =>
        known ? client.setApprovalMode({ mode: known }) : client.getApprovalMode(),
      );
      output(ctx, opts.json, result, () => `approval mode: ${result.mode}`);
    });
}

const ALLOW_ALL_MEANS = [
  "allow_all: every tool call that require_approval would queue for your review runs at once, for every task,",
  "schedule and mission, until you set ask_me again (it is kept across restarts). The allow and deny lists of",
  "tools_policy.yaml and your deny decisions still apply.",
].join("\n");

/** One line of standard input (the answer to a question), or undefined at its end. */
async function readLine(ctx: CliContext): Promise<string | undefined> {
  const { createInterface } = await import("node:readline");
  const lines = createInterface({ input: ctx.stdin, terminal: false });
  try {
    for await (const line of lines) return line;
    return undefined;
  } finally {
    lines.close();
  }
}

/**
 * What a new allow decision does: it answers require_approval (the call runs without asking), never the allow
 * lists of tools_policy.yaml, so for a tool the file does not allow it changes nothing: said at creation.
 */
function allowDecisionNote(decision: Decision, view: EffectiveTools): string {
  const answers = "an allow decision only answers require_approval (matching calls run without asking)";
  const tool = view.tools.find((t) => t.name === decision.tool);
  const list = tool ? LIST_OF[tool.resource] : undefined;
  if (!tool || !list) return `${answers}; it never allows what ${view.policy_file} does not.`;
  if (tool.status === "blocked") {
    return `${answers}, and ${decision.tool} is blocked by the policy (${tool.rule}): this decision changes nothing until ${view.policy_file} allows it.`;
  }
  const covered = tool.allowed.includes("*") || tool.allowed.includes(decision.scope);
  const listed = tool.allowed.join(", ");
  return covered || list !== "allowed_commands"
    ? `${answers}; ${decision.tool} still runs only on what ${list} of ${view.policy_file} allows (now: ${listed}).`
    : `${answers}: ${decision.scope} is not in ${list} of ${view.policy_file} (now: ${listed}), so it is still refused. Add it there to allow it (the file is read again at the next call).`;
}

const LIST_OF: Record<string, string | undefined> = {
  read: "allowed_read_paths",
  write: "allowed_write_paths",
  command: "allowed_commands",
  web: "allowed_web_domains",
  skill_install: "allowed_skill_install_hosts",
};

function formatQueue(items: QueueItem[], status: string | undefined): string {
  if (items.length === 0) return status ? `no ${status} items in the review queue` : "the review queue is empty";
  return items
    .map((item) => {
      const when = item.status === "pending" ? `expires ${item.expires_at}` : `resolved ${item.resolved_at}`;
      const lines = [
        `${item.id}  ${item.status.padEnd(8)}  ${item.tool}  (rule: ${item.rule}, ${when})`,
        `    arguments: ${item.arguments_summary}`,
      ];
      if (item.note) lines.push(`    note: ${item.note}`);
      return lines.join("\n");
    })
    .join("\n");
}
