// The statuses of a review-queue item, apart from the queue so the event registry can name them (the queue emits
// events, so the registry importing it would be a cycle).

export const QUEUE_STATUSES = ["pending", "approved", "denied", "expired"] as const;
export type QueueStatus = (typeof QUEUE_STATUSES)[number];
/** How an item ends (approval_resolved); final statuses never change again. */
export const FINAL_QUEUE_STATUSES = ["approved", "denied", "expired"] as const satisfies readonly QueueStatus[];
export type FinalStatus = (typeof FINAL_QUEUE_STATUSES)[number];
