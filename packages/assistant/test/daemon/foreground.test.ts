import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanUp, health, portOpen, sandbox, tempDir, waitFor } from "./helpers.ts";

afterEach(cleanUp);

describe("assistant start --foreground", () => {
  it("runs the daemon in the CLI process and shuts down gracefully on SIGTERM with exit code 0", async () => {
    const box = await sandbox();
    const child = box.spawnCli(["start", "--foreground"]);
    let stderr = "";
    child.stderr!.on("data", (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    await waitFor("the daemon to be up", () => box.daemonInfo()?.pid === child.pid || undefined);
    await waitFor("health", () => health(box.port));
    expect(box.daemonInfo()?.supervisor_pid).toBeUndefined();
    expect(stderr).toContain("listening on"); // logs are mirrored to the terminal in the foreground

    // An open event stream is a request in flight when the signal arrives: it gets the stopping event, then ends.
    const token = readFileSync(join(box.dataDir, "auth_token"), "utf8").trim();
    const response = await fetch(`http://127.0.0.1:${box.port}/api/events`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    let received = new TextDecoder().decode((await reader.read()).value);
    child.kill("SIGTERM");
    const decoder = new TextDecoder();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        received += decoder.decode(value, { stream: true });
      }
    } catch {
      // a stream cut at shutdown may end with an error instead of a clean end; what it carried is what counts
    }
    expect(received).toContain("daemon_stopping");

    expect(await exited).toBe(0);
    expect(box.log()).toMatch(/shutting down .*SIGTERM/);
    expect(box.log()).toContain("INFO  stopped");
    expect(existsSync(join(box.dataDir, "daemon.json"))).toBe(false);
    // SQLite removes the write-ahead log when the last connection closes cleanly.
    expect(existsSync(join(box.dataDir, "assistant.db"))).toBe(true);
    expect(existsSync(join(box.dataDir, "assistant.db-wal"))).toBe(false);
    expect(await portOpen(box.port)).toBe(false);
  });

  it("passes the daemon's exit code through: 78 for a start a restart cannot fix", async () => {
    const file = join(tempDir(), "file");
    writeFileSync(file, "not a directory");
    const box = await sandbox({ dataDir: join(file, "sub") });
    const run = await box.cli(["start", "--foreground"]);
    expect(run.code).toBe(78);
    expect(run.stderr).toContain(`the data directory ${join(file, "sub")} is not writable`);
  });
});

describe("assistant stop, for a daemon started with --foreground", () => {
  it("sends it SIGTERM and waits until it is gone", async () => {
    const box = await sandbox();
    const child = box.spawnCli(["start", "--foreground"]);
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    await waitFor("the daemon to be up", () => box.daemonInfo()?.pid === child.pid || undefined);
    const status = await box.cli(["status"]);
    expect(status.stdout).toContain("not supervised");
    const stop = await box.cli(["stop"]);
    expect(stop.code).toBe(0);
    expect(stop.stdout).toContain(`stopped the daemon (pid ${child.pid})`);
    expect(await exited).toBe(0);
    expect(await portOpen(box.port)).toBe(false);
  });
});
