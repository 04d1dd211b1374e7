import { AppError } from "../../util/errors.ts";
import type { Decision, PersistentDecisions } from "./decisions.ts";
import type { QueueItem, ReviewQueue } from "./queue.ts";

// "Always" on a call waiting for approval: approve it, and let calls of the same tool on the same scope (the path,
// command, host... it asked about) run without asking from now on, as a persistent allow decision. Like any allow
// decision it answers require_approval only: it never widens tools_policy.yaml.

export interface AlwaysResult {
  item: QueueItem;
  /** The allow decision that now answers for the tool and scope (new, or one that already did). */
  decision: Decision;
}

export function approveAlways(
  services: { queue: Pick<ReviewQueue, "get" | "approve">; decisions: Pick<PersistentDecisions, "all" | "create"> },
  id: string,
  note?: string,
): AlwaysResult {
  const pending = services.queue.get(id);
  if (pending.scope === null) {
    throw new AppError(
      "invalid_request",
      `review queue item ${id} does not say what it is about (queued by an older version): approve it without always`,
      { id },
    );
  }
  const scope = pending.scope;
  const existing = services.decisions.all().find((d) => d.tool === pending.tool && d.scope === scope);
  if (existing?.effect === "deny") {
    throw new AppError(
      "conflict",
      `a deny decision for ${pending.tool} ${scope} exists (id ${existing.id}); delete it first, or approve without always`,
      { id: existing.id },
    );
  }
  const item = services.queue.approve(id, note);
  const decision = existing ?? services.decisions.create({ tool: item.tool, scope, effect: "allow" });
  return { item, decision };
}
