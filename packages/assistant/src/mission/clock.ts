// Time as the mission sees it. Injected so tests drive heartbeats with a fake clock instead of waiting.

export interface MissionClock {
  now(): number;
  setTimer(fn: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
}

// setTimeout fires at once for delays over 2^31-1 ms (~24.8 days); longer waits are re-armed in steps.
export const MAX_TIMER_MS = 2_147_483_647;

export const SYSTEM_CLOCK: MissionClock = {
  now: () => Date.now(),
  setTimer: (fn, ms) => {
    const timer = setTimeout(fn, Math.min(ms, MAX_TIMER_MS));
    timer.unref(); // the HTTP server keeps the daemon alive, not a pending heartbeat
    return timer;
  },
  clearTimer: (handle) => clearTimeout(handle as NodeJS.Timeout),
};
