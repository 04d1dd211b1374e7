import type { AssistantClient, QueueItem } from "@assistant/client";
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
    .action(async (opts: { status?: string; json?: boolean }) => {
      const status = STATUSES.find((known) => known === opts.status);
      if (opts.status !== undefined && !status) {
        throw new AppError("invalid_request", `--status must be one of ${STATUSES.join(", ")} (got "${opts.status}")`);
      }
      const items = await allPages<QueueItem>(ctx, "the review queue cannot be listed", (client, from) =>
        client.listQueueItems({ ...(status ? { status } : {}), limit: PAGE, ...from }),
      );
      output(ctx, opts.json, items, () => formatQueue(items, opts.status));
    });
  for (const action of ["approve", "deny", "expire"] as const) {
    queue
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
      .option("--json", "machine-readable output")
      .action(async (itemId: string, opts: { note?: string; json?: boolean }) => {
        const body = opts.note !== undefined ? { note: opts.note } : {};
        const item = await callDaemon(ctx, `item ${itemId} cannot be changed`, (client) =>
          action === "approve"
            ? client.approveQueueItem(itemId, body)
            : action === "deny"
              ? client.denyQueueItem(itemId, body)
              : client.expireQueueItem(itemId, body),
        );
        output(
          ctx,
          opts.json,
          item,
          () => `${item.id} ${item.status} (${item.tool})${item.note ? `: ${item.note}` : ""}`,
        );
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
      const decision = await callDaemon(ctx, "no decision can be added", (client) =>
        client.createDecision({ tool, scope, effect: asTyped(effect) }),
      );
      output(
        ctx,
        opts.json,
        decision,
        () => `added ${decision.id}: ${decision.effect} ${decision.tool} ${decision.scope}`,
      );
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
    .option("--json", "machine-readable output")
    .action(async (mode: string | undefined, opts: { json?: boolean }) => {
      const known = MODES.find((name) => name === mode);
      if (mode !== undefined && !known) {
        throw new AppError("invalid_request", `mode must be ${MODES.join(" or ")} (got "${mode}")`);
      }
      const result = await callDaemon(ctx, "the approval mode is not available", (client) =>
        known ? client.setApprovalMode({ mode: known }) : client.getApprovalMode(),
      );
      output(ctx, opts.json, result, () => `approval mode: ${result.mode}`);
    });
}

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
