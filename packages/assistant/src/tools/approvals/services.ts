import type { DaemonSettings } from "../../config/settings.ts";
import type { Db } from "../../store/database.ts";
import { PersistentDecisions } from "./decisions.ts";
import { ApprovalMode } from "./mode.ts";
import { type QueueEvents, ReviewQueue } from "./queue.ts";

// The approval services of the daemon, built once at start: the review queue (with its expiry sweep), the
// persistent decisions and the global approval mode.

export interface ApprovalServices {
  queue: ReviewQueue;
  decisions: PersistentDecisions;
  mode: ApprovalMode;
  /** Stops the expiry sweep (daemon stop). */
  close(): void;
}

export function createApprovalServices(options: {
  db: Db;
  settings: Pick<DaemonSettings, "approvalTimeoutSecs">;
  events: QueueEvents;
}): ApprovalServices {
  const queue = new ReviewQueue(options.db, {
    timeoutSecs: options.settings.approvalTimeoutSecs,
    events: options.events,
  });
  queue.expireDue(); // items that fell due while the daemon was down
  queue.startSweep();
  return {
    queue,
    decisions: new PersistentDecisions(options.db),
    mode: new ApprovalMode(options.db),
    close: () => queue.stopSweep(),
  };
}
