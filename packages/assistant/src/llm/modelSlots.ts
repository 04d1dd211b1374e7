import type { LlmRouterConfig } from "../config/schemas/llmRouter.ts";
import type { LlmPriority, Provider } from "./types.ts";

// The model slot scheduler: one per provider that shares a machine's model (docs/models.md#who-goes-first). The
// model serves the person first: a user turn, then a tool round of a turn already under way, then background
// work nobody waits on (memory extraction). Foreground calls are never held back below what the provider
// serves at once; background work runs on a local model only while no foreground call is running or waiting
// there, and is preempted (aborted, then retried by the router once the model is free again) when one arrives.

const RANK: Record<LlmPriority, number> = { user: 0, tool: 1, background: 2 };

export interface SlotPolicy {
  /** Calls the provider serves at once; Infinity when it takes every call (a server without `parallel`). */
  capacity: number;
  /** Background calls yield the model to foreground ones (local models: they share this machine's cores). */
  yieldsToForeground: boolean;
}

/**
 * How a provider's calls are scheduled, or null when they need no scheduling (cloud providers without
 * `parallel`, and assistant_core, which runs no model). The embedded model has one slot (one llama.cpp context
 * sequence, embedded/runtime.ts); a local server has `parallel` slots when the router file sets it, else it is
 * trusted to serve every call at once.
 */
export function slotPolicyFor(provider: Pick<Provider, "id" | "local">, config: LlmRouterConfig): SlotPolicy | null {
  if (provider.id === "assistant_core") return null;
  if (provider.id === "assistant_embedded") return { capacity: 1, yieldsToForeground: true };
  const parallel = config.providers?.[provider.id]?.parallel;
  if (provider.local) return { capacity: parallel ?? Number.POSITIVE_INFINITY, yieldsToForeground: true };
  return parallel ? { capacity: parallel, yieldsToForeground: false } : null;
}

/** The abort reason of a background call a foreground call took the model from. */
export class Preempted extends Error {
  constructor() {
    super("preempted by a foreground call");
    this.name = "Preempted";
  }
}

/** One call's hold on a slot; release it exactly when the call ends (release is idempotent). */
export interface SlotLease {
  /** Aborts with `Preempted` when a foreground call takes the model from this background call. */
  readonly signal: AbortSignal;
  readonly preempted: boolean;
  release(): void;
}

interface Holder {
  priority: LlmPriority;
  controller: AbortController;
  preempted: boolean;
}

interface Waiter {
  priority: LlmPriority;
  grant: (lease: SlotLease) => void;
}

export class ModelSlots {
  readonly policy: SlotPolicy;
  readonly #running = new Set<Holder>();
  /** Sorted by priority, arrival order within one. */
  readonly #waiting: Waiter[] = [];

  constructor(policy: SlotPolicy) {
    this.policy = policy;
  }

  /** Calls holding a slot (preempted ones leaving are not counted), and calls waiting for one. */
  get load(): { running: number; waiting: number } {
    return { running: this.#busy(), waiting: this.#waiting.length };
  }

  /** Waits for a slot by priority; rejects with the signal's reason when it aborts first. */
  acquire(priority: LlmPriority, signal?: AbortSignal): Promise<SlotLease> {
    signal?.throwIfAborted();
    if (priority !== "background" && this.policy.yieldsToForeground) this.#preemptBackground();
    return new Promise<SlotLease>((resolve, reject) => {
      const onAbort = () => {
        const index = this.#waiting.indexOf(waiter);
        if (index >= 0) this.#waiting.splice(index, 1);
        reject(signal!.reason);
        this.#pump(); // a foreground call that left may let background work start
      };
      const waiter: Waiter = {
        priority,
        grant: (lease) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(lease);
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      const at = this.#waiting.findIndex((w) => RANK[w.priority] > RANK[priority]);
      this.#waiting.splice(at < 0 ? this.#waiting.length : at, 0, waiter);
      this.#pump();
    });
  }

  #busy(): number {
    let busy = 0;
    for (const holder of this.#running) if (!holder.preempted) busy++;
    return busy;
  }

  #foregroundRunning(): boolean {
    for (const holder of this.#running) if (holder.priority !== "background") return true;
    return false;
  }

  #canStart(priority: LlmPriority): boolean {
    if (this.#busy() >= this.policy.capacity) return false;
    // The queue is sorted: a background call at its head means no foreground call waits.
    return priority !== "background" || !this.policy.yieldsToForeground || !this.#foregroundRunning();
  }

  #pump(): void {
    while (this.#waiting.length > 0 && this.#canStart(this.#waiting[0]!.priority)) {
      const waiter = this.#waiting.shift()!;
      waiter.grant(this.#grant(waiter.priority));
    }
  }

  #grant(priority: LlmPriority): SlotLease {
    const holder: Holder = { priority, controller: new AbortController(), preempted: false };
    this.#running.add(holder);
    return {
      signal: holder.controller.signal,
      get preempted() {
        return holder.preempted;
      },
      release: () => {
        if (this.#running.delete(holder)) this.#pump();
      },
    };
  }

  #preemptBackground(): void {
    for (const holder of this.#running) {
      if (holder.priority !== "background" || holder.preempted) continue;
      holder.preempted = true;
      holder.controller.abort(new Preempted());
    }
  }
}
