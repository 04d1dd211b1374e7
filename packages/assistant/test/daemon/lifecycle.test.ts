import { spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { VERSION } from "../../src/version.ts";
import { cleanUp, health, pidGone, portOpen, sandbox, tempDir, waitFor } from "./helpers.ts";

afterEach(cleanUp);

describe("assistant start / status / stop", () => {
  it("starts a supervised daemon in the background, reports it, refuses a second start and stops it", async () => {
    const box = await sandbox();
    const began = Date.now();
    const start = await box.cli(["start"]);
    const elapsed = Date.now() - began;
    expect(start.stderr).toBe("");
    expect(start.code).toBe(0);
    expect(start.stdout).toContain(`http://127.0.0.1:${box.port}`);
    expect(start.stdout).toContain(join(box.dataDir, "logs", "daemon.log"));
    console.info(`assistant start -> healthy: ${elapsed} ms (CLI process included)`);

    expect(await health(box.port)).toEqual({ status: "ok", version: VERSION });
    const info = box.daemonInfo()!;
    expect(info.port).toBe(box.port);
    expect(info.supervisor_pid).toBeGreaterThan(0);
    expect(start.stdout).toContain(`pid  ${info.pid}`);

    const status = await box.cli(["status"]);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain("is running");
    expect(status.stdout).toContain(`${info.pid}`);
    const json = JSON.parse((await box.cli(["status", "--json"])).stdout);
    expect(json).toMatchObject({
      running: true,
      url: `http://127.0.0.1:${box.port}`,
      daemon: { pid: info.pid, supervisor_pid: info.supervisor_pid },
      supervisor: { pid: info.supervisor_pid, state: "running", restarts: 0 },
      status: { version: VERSION, pid: info.pid, data_dir: box.dataDir },
    });

    const again = await box.cli(["start"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("already running");
    expect(again.stderr).toContain(`pid ${info.pid}`);
    expect(again.stderr).toContain(`http://127.0.0.1:${box.port}`);
    expect(box.daemonInfo()!.pid).toBe(info.pid); // the running daemon is untouched

    const stop = await box.cli(["stop"]);
    expect(stop.code).toBe(0);
    expect(stop.stdout).toContain(`stopped the daemon (pid ${info.pid})`);
    expect(await portOpen(box.port)).toBe(false);
    expect(existsSync(join(box.dataDir, "daemon.json"))).toBe(false);
    expect(existsSync(join(box.dataDir, "supervisor.json"))).toBe(false);
    expect(box.log()).toContain("supervisor stopped");

    const down = await box.cli(["status"]);
    expect(down.code).toBe(1);
    expect(down.stderr).toContain("no daemon is running");
    expect(down.stderr).toContain("assistant start");
    const downJson = await box.cli(["status", "--json"]);
    expect(downJson.code).toBe(1);
    expect(JSON.parse(downJson.stdout)).toMatchObject({ running: false, daemon: null });
  });

  it("`stop` when nothing runs says so and succeeds", async () => {
    const box = await sandbox();
    const stop = await box.cli(["stop"]);
    expect(stop.code).toBe(0);
    expect(stop.stdout).toContain("no daemon is running");
  });

  it("`stop` removes a daemon.json left by a daemon that died", async () => {
    const box = await sandbox();
    await box.cli(["start"]);
    const info = box.daemonInfo()!;
    process.kill(info.supervisor_pid!, "SIGKILL"); // no supervisor to clean up after the daemon
    process.kill(info.pid, "SIGKILL");
    await waitFor("both processes to die", () => pidGone(info.pid) && pidGone(info.supervisor_pid!));
    const stop = await box.cli(["stop"]);
    expect(stop.code).toBe(0);
    expect(stop.stdout).toContain("no daemon is running");
    expect(existsSync(join(box.dataDir, "daemon.json"))).toBe(false);
  });

  it("`up` starts a stopped daemon, accepts a running one, and `--open-hint` says how to reach it", async () => {
    const box = await sandbox();
    const up = await box.cli(["up"]);
    expect(up.code).toBe(0);
    expect(up.stdout).toContain(`is up on 127.0.0.1:${box.port}`);
    expect(up.stdout).toContain("started in");
    const pid = box.daemonInfo()!.pid;
    expect(await health(box.port)).toMatchObject({ status: "ok" });

    const again = await box.cli(["up", "--open-hint"]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("already running");
    expect(again.stdout).toContain(`http://127.0.0.1:${box.port}/api/health`);
    expect(again.stdout).toContain(join(box.dataDir, "auth_token"));
    expect(again.stdout).toContain("assistant status");
    // Every address it prints answers: the bare URL has no page until a web UI exists.
    for (const url of again.stdout.match(/http:\/\/\S+/g) ?? []) {
      expect((await fetch(url)).status, url).not.toBe(404);
    }
    expect(box.daemonInfo()!.pid).toBe(pid);
  });

  it("`restart` stops the running daemon and starts a new one; with nothing running it starts one", async () => {
    const box = await sandbox();
    await box.cli(["start"]);
    const before = box.daemonInfo()!;
    const restart = await box.cli(["restart"]);
    expect(restart.stderr).toBe("");
    expect(restart.code).toBe(0);
    expect(restart.stdout).toContain(`stopped the daemon (pid ${before.pid})`);
    expect(restart.stdout).toContain("started in");
    const after = box.daemonInfo()!;
    expect(after.pid).not.toBe(before.pid);
    expect(after.supervisor_pid).not.toBe(before.supervisor_pid);
    expect(pidGone(before.pid)).toBe(true);
    expect(await health(box.port)).toMatchObject({ status: "ok" });

    await box.cli(["stop"]);
    const cold = await box.cli(["restart"]);
    expect(cold.code).toBe(0);
    expect(cold.stdout).toContain("no daemon was running; starting it");
    expect(await health(box.port)).toMatchObject({ status: "ok" });
  });
});

describe("assistant up, against a daemon of another version", () => {
  it("refuses and tells the user to stop it first", async () => {
    const box = await sandbox();
    const fixture = join(import.meta.dirname, "fixtures", "other-version-assistant-daemon.mjs");
    const old = spawn(process.execPath, [fixture], { env: box.env, stdio: "ignore" });
    try {
      await waitFor("the other daemon", () => box.daemonInfo()?.pid === old.pid || undefined);
      const up = await box.cli(["up"]);
      expect(up.code).toBe(1);
      expect(up.stderr).toContain(`the running daemon is version 0.0.1 but this CLI is ${VERSION}`);
      expect(up.stderr).toContain("assistant stop");
      const stop = await box.cli(["stop"]);
      expect(stop.code).toBe(0);
      expect(stop.stdout).toContain(`stopped the daemon (pid ${old.pid})`);
    } finally {
      old.kill("SIGKILL");
    }
  });
});

describe("start failures are reported, and leave nothing running", () => {
  it("a port in use fails the start with a message naming the port", async () => {
    const blocker = createServer();
    const box = await sandbox();
    await new Promise<void>((resolve) => blocker.listen(box.port, "127.0.0.1", resolve));
    try {
      const start = await box.cli(["start"]);
      expect(start.code).not.toBe(0);
      expect(start.stderr).toContain(`port ${box.port}`);
      expect(start.stderr).toContain("already in use");
      expect(box.supervisorState()?.state).toBe("failed");
      expect(box.daemonInfo()).toBeUndefined();
      const status = await box.cli(["status"]);
      expect(status.code).toBe(1);
      expect(status.stderr).toContain("not restarting");
      // A later start that finds nothing running is not confused by the failed one.
      expect((await box.cli(["stop"])).stdout).toContain("no daemon is running");
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it("an unusable data directory is a clear error", async () => {
    const file = join(tempDir(), "file");
    writeFileSync(file, "not a directory"); // tests run as root, so chmod would not stop them; a file does
    const box = await sandbox({ dataDir: join(file, "sub") });
    const start = await box.cli(["start"]);
    expect(start.code).toBe(1);
    expect(start.stderr).toContain(`cannot write to the data directory ${join(file, "sub")}`);
    expect(start.stderr).toContain("ASSISTANT_DATA_DIR");
    const up = await box.cli(["up"]);
    expect(up.code).toBe(1);
    expect(up.stderr).toContain("ASSISTANT_DATA_DIR");
  });
});
