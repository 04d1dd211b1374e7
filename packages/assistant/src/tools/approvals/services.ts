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

/** Throws ConfigError when ASSISTANT_APPROVAL_TIMEOUT_SECS is not valid. */
export function createApprovalServices(options: {
  db: Db;
  env: NodeJS.ProcessEnv;
  events: QueueEvents;
}): ApprovalServices {
  const queue = new ReviewQueue(options.db, { env: options.env, events: options.events });
  queue.expireDue(); // items that fell due while the daemon was down
  queue.startSweep();
  return {
    queue,
    decisions: new PersistentDecisions(options.db),
    mode: new ApprovalMode(options.db),
    close: () => queue.stopSweep(),
  };
}
