import { describe, expect, it } from "vitest";
import { type CrashHistory, DEFAULT_RESTART_POLICY, decideRestart } from "../../src/daemon/supervisor.ts";

// The backoff and give-up policy, with the clock given by the test.

function crashesAt(times: number[], uptimeMs = 100): ReturnType<typeof decideRestart>["decision"][] {
  let history: CrashHistory = { crashes: [], streak: 0 };
  return times.map((now) => {
    const verdict = decideRestart(history, now, uptimeMs);
    history = verdict.history;
    return verdict.decision;
  });
}

describe("decideRestart", () => {
  it("doubles the delay from 1 s and gives up at the 5th crash within 5 minutes", () => {
    expect(crashesAt([0, 10_000, 20_000, 30_000, 40_000])).toEqual([
      { restart: true, delayMs: 1_000 },
      { restart: true, delayMs: 2_000 },
      { restart: true, delayMs: 4_000 },
      { restart: true, delayMs: 8_000 },
      { restart: false, crashesInWindow: 5 },
    ]);
  });

  it("caps the delay at 30 s", () => {
    const policy = { ...DEFAULT_RESTART_POLICY, maxCrashes: 100 };
    let history: CrashHistory = { crashes: [], streak: 0 };
    const delays: number[] = [];
    for (let i = 0; i < 8; i++) {
      const verdict = decideRestart(history, i * 1_000, 10, policy);
      history = verdict.history;
      if (verdict.decision.restart) delays.push(verdict.decision.delayMs);
    }
    expect(delays).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]);
  });

  it("starts the backoff over after 60 s of healthy uptime", () => {
    let history: CrashHistory = { crashes: [], streak: 0 };
    for (const now of [0, 5_000, 10_000]) history = decideRestart(history, now, 100).history;
    expect(history.streak).toBe(3);
    const verdict = decideRestart(history, 100_000, 60_000);
    expect(verdict.decision).toEqual({ restart: true, delayMs: 1_000 });
  });

  it("forgets crashes older than 5 minutes", () => {
    const minute = 60_000;
    const decisions = crashesAt([0, 1 * minute, 2 * minute, 3 * minute, 6 * minute, 7 * minute], 61_000);
    expect(decisions.every((d) => d.restart)).toBe(true);
    expect(crashesAt([0, 1 * minute, 2 * minute, 3 * minute, 4 * minute], 61_000).at(-1)).toEqual({
      restart: false,
      crashesInWindow: 5,
    });
  });
});
