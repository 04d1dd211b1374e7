import { describe, expect, it } from "vitest";
import { coalesce } from "../src/coalesce.ts";

// The live views reload through coalesce: however many events arrive during a reload, one more reload follows it.

describe("coalesce", () => {
  it("runs a burst of calls as the one in flight plus one more, and every caller's promise settles after", async () => {
    let runs = 0;
    let release: () => void = () => {};
    const reload = coalesce(async () => {
      runs++;
      await new Promise<void>((resolve) => {
        release = resolve;
      });
    });
    const first = reload();
    const burst = Array.from({ length: 500 }, () => reload());
    expect(runs).toBe(1);
    release();
    await new Promise((r) => setTimeout(r, 0));
    expect(runs).toBe(2); // the burst became one more run
    release();
    await Promise.all([first, ...burst]);
    expect(runs).toBe(2);
    // Idle again: the next call runs at once.
    const later = reload();
    expect(runs).toBe(3);
    release();
    await later;
  });

  it("keeps going after a failed run, and the failure reaches the callers of that run", async () => {
    let runs = 0;
    const reload = coalesce(async () => {
      runs++;
      if (runs === 1) throw new Error("daemon down");
    });
    await expect(reload()).rejects.toThrow("daemon down");
    await reload();
    expect(runs).toBe(2);
  });
});
