import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanUp, health, pidGone, portOpen, type Sandbox, sandbox, waitFor } from "./helpers.ts";

afterEach(cleanUp);

/** Waits for a daemon other than `previous` to be registered and healthy; returns its pid. */
async function nextDaemon(box: Sandbox, previous: number | undefined): Promise<number> {
  const pid = await waitFor("a new daemon pid", () => {
    const info = box.daemonInfo();
    return info && info.pid !== previous ? info.pid : undefined;
  }).catch((error: Error) => {
    throw new Error(`${error.message}; log:\n${box.log()}`);
  });
  await waitFor("health", () => health(box.port));
  return pid;
}

describe("the supervisor behind `assistant start`", () => {
  it("restarts the daemon after it is killed", async () => {
    const box = await sandbox();
    expect((await box.cli(["start"])).code).toBe(0);
    const first = box.daemonInfo()!;
    process.kill(first.pid, "SIGKILL");
    const second = await nextDaemon(box, first.pid);
    expect(second).not.toBe(first.pid);
    expect(box.daemonInfo()!.supervisor_pid).toBe(first.supervisor_pid);
    expect(box.log()).toContain("the daemon was killed by SIGKILL; restarting it in 1 s");
    const status = await box.cli(["status"]);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`pid       ${second} (supervised by ${first.supervisor_pid}, restarted 1 time)`);
  });

  it.runIf(process.platform === "linux")(
    "starts the daemon with two malloc arenas unless the person chose a number",
    async () => {
      const environOf = (pid: number) => readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
      const box = await sandbox();
      expect((await box.cli(["start"], { MALLOC_ARENA_MAX: undefined })).code).toBe(0);
      expect(environOf(box.daemonInfo()!.pid)).toContain("MALLOC_ARENA_MAX=2");
      expect((await box.cli(["stop"])).code).toBe(0);
      expect((await box.cli(["start"], { MALLOC_ARENA_MAX: "4" })).code).toBe(0);
      expect(environOf(box.daemonInfo()!.pid)).toContain("MALLOC_ARENA_MAX=4");
    },
  );

  it("gives up after 5 crashes within 5 minutes, and says so", { timeout: 90_000 }, async () => {
    const box = await sandbox();
    expect((await box.cli(["start"])).code).toBe(0);
    const supervisorPid = box.daemonInfo()!.supervisor_pid!;
    let pid: number | undefined;
    for (let crash = 1; crash <= 5; crash++) {
      pid = await nextDaemon(box, pid);
      process.kill(pid, "SIGKILL");
    }
    await waitFor("the supervisor to give up", () => box.supervisorState()?.state === "gave_up" || undefined, 30_000);
    await waitFor("the supervisor to exit", () => pidGone(supervisorPid));
    expect(box.log()).toContain("it crashed 5 times within 5 minutes, so the supervisor gives up");
    // the waits between restarts grew: 1, 2, 4, 8 s
    for (const delay of [1, 2, 4, 8]) expect(box.log()).toContain(`restarting it in ${delay} s`);
    expect(existsSync(join(box.dataDir, "daemon.json"))).toBe(false);
    expect(await portOpen(box.port)).toBe(false);

    const status = await box.cli(["status"]);
    expect(status.code).toBe(1);
    expect(status.stderr).toContain("gives up");
    const json = JSON.parse((await box.cli(["status", "--json"])).stdout);
    expect(json).toMatchObject({ running: false, supervisor: { state: "gave_up", restarts: 4 } });

    // A fresh start after giving up works.
    const again = await box.cli(["start"]);
    expect(again.code).toBe(0);
    const fresh = await waitFor("the new supervisor to see its daemon up", () => {
      const state = box.supervisorState();
      return state?.state === "running" ? state : undefined;
    });
    expect(fresh.restarts).toBe(0);
    expect(fresh.pid).not.toBe(supervisorPid);
  });
});
