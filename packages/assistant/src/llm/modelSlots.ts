import type { LlmRouterConfig } from "../config/schemas/llmRouter.ts";
import type { LlmPriority, Provider } from "./types.ts";

// The model slot scheduler: one per provider that shares a machine's model (docs/models.md#who-goes-first). The
// model serves the person first: a user turn, then a tool round of a turn already under way, then background
// work nobody waits on (memory extraction). Foreground calls are never held back below what the provider
// serves at once; background work runs on a local model only while no foreground call is running or waiting
// there, and is preempted (aborted, then retried by the router once the model is free again) when one arrives.
// It also waits for the model to have been free for a moment (doubling after each preemption), so the gap
// between two rounds of a turn, or a lull under steady load, does not start work that is aborted at once.

const RANK: Record<LlmPriority, number> = { user: 0, tool: 1, background: 2 };

/** How long the model must have been free of foreground calls before background work starts on it. */
const BACKGROUND_CALM_MS = 500;
const MAX_BACKGROUND_CALM_MS = 60_000;

/** The calm a background call waits for after `preemptions` preemptions: each one doubles it. */
export function backgroundCalmMs(preemptions: number): number {
  return Math.min(MAX_BACKGROUND_CALM_MS, BACKGROUND_CALM_MS * 2 ** preemptions);
}

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
class Preempted extends Error {
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
  calmMs: number;
  grant: (lease: SlotLease) => void;
}

export class ModelSlots {
  readonly policy: SlotPolicy;
  readonly #running = new Set<Holder>();
  /** Sorted by priority, arrival order within one. */
  readonly #waiting: Waiter[] = [];
  /** When the last foreground call left the model (never: background may start at once). */
  #freeSince = Number.NEGATIVE_INFINITY;
  #calmTimer: NodeJS.Timeout | null = null;

  constructor(policy: SlotPolicy) {
    this.policy = policy;
  }

  /**
   * Waits for a slot by priority; rejects with the signal's reason when it aborts first. `preemptions`: how often
   * this background call was preempted already (it then waits for a longer calm).
   */
  acquire(priority: LlmPriority, signal?: AbortSignal, preemptions = 0): Promise<SlotLease> {
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
        calmMs: priority === "background" && this.policy.yieldsToForeground ? backgroundCalmMs(preemptions) : 0,
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

  #canStart(waiter: Waiter): boolean {
    if (this.#busy() >= this.policy.capacity) return false;
    // The queue is sorted: a background call at its head means no foreground call waits.
    if (waiter.priority !== "background" || !this.policy.yieldsToForeground) return true;
    if (this.#foregroundRunning()) return false;
    const calmLeft = this.#freeSince + waiter.calmMs - performance.now();
    if (calmLeft <= 0) return true;
    clearTimeout(this.#calmTimer ?? undefined);
    this.#calmTimer = setTimeout(() => {
      this.#calmTimer = null;
      this.#pump();
    }, calmLeft);
    this.#calmTimer.unref();
    return false;
  }

  #pump(): void {
    while (this.#waiting.length > 0 && this.#canStart(this.#waiting[0]!)) {
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
        if (!this.#running.delete(holder)) return;
        if (priority !== "background" && !this.#foregroundRunning()) this.#freeSince = performance.now();
        this.#pump();
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
