import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { withFileLock } from "../../src/util/fileLock.ts";
import { KEYRING_ENV, MASTER_KEY_ENV } from "../../src/vault/keySource.ts";
import { api, raw, startDaemon, tempDataDir } from "../helpers/daemon.ts";
import { removeTempDirs, tempPaths, vaultAt } from "./helpers.ts";

afterEach(removeTempDirs);

const setMany = fileURLToPath(new URL("./fixtures/setMany.ts", import.meta.url));

function runSetMany(
  dataDir: string,
  prefix: string,
  count: number,
  startAt: number,
  env: NodeJS.ProcessEnv,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [setMany, dataDir, prefix, String(count), String(startAt)], { env });
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("exit", (code) =>
      code === 0 ? resolve(stderr) : reject(new Error(`${prefix} exited ${code}: ${stderr}`)),
    );
  });
}

describe("concurrent writers", () => {
  for (const [label, extra] of [
    ["key file", {}],
    ["master key", { [MASTER_KEY_ENV]: "shared master key" }],
  ] as const) {
    it(`two processes x 20 sets lose nothing (${label}, both racing to create the vault)`, async () => {
      const paths = tempPaths();
      const env: NodeJS.ProcessEnv = { ...process.env };
      delete env[MASTER_KEY_ENV];
      env[KEYRING_ENV] = "0";
      Object.assign(env, extra);
      const startAt = Date.now() + 1_000; // both children load first, then write at the same moment
      await Promise.all([
        runSetMany(paths.dataDir, "p1", 20, startAt, env),
        runSetMany(paths.dataDir, "p2", 20, startAt, env),
      ]);
      const vault = vaultAt(paths, extra);
      const names = vault.list();
      expect(names).toHaveLength(40);
      for (const p of ["p1", "p2"])
        for (let i = 0; i < 20; i++) expect(vault.get(`${p}_${i}`)).toBe(`value of ${p} ${i}`);
    });
  }
});

describe("lock file", () => {
  function deadPid(): number {
    const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]);
    return Number(child.stdout.toString());
  }

  it("breaks a lock left by a process that died", async () => {
    const paths = tempPaths();
    mkdirSync(paths.dataDir, { recursive: true });
    writeFileSync(`${paths.vaultFile}.lock`, JSON.stringify({ pid: deadPid(), host: hostname(), token: "old" }));
    const started = Date.now();
    await vaultAt(paths, {}, { lock: { timeoutMs: 5_000 } }).set("a", "value");
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(vaultAt(paths).get("a")).toBe("value");
  });

  it("waits a bounded time for a live holder, then fails with a clear error and changes nothing", async () => {
    const paths = tempPaths();
    mkdirSync(paths.dataDir, { recursive: true });
    writeFileSync(`${paths.vaultFile}.lock`, JSON.stringify({ pid: process.pid, host: hostname(), token: "live" }));
    const started = Date.now();
    await expect(vaultAt(paths, {}, { lock: { timeoutMs: 300 } }).set("a", "value")).rejects.toThrow(
      /is held by another process/,
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(vaultAt(paths).list()).toEqual([]);
  });

  it("waits without blocking the event loop, and writes once the holder lets go", async () => {
    const paths = tempPaths();
    mkdirSync(paths.dataDir, { recursive: true });
    const lock = `${paths.vaultFile}.lock`;
    writeFileSync(lock, JSON.stringify({ pid: process.pid, host: hostname(), token: "live" }));
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 10);
    setTimeout(() => rmSync(lock), 300); // the other writer finishes
    const started = Date.now();
    await vaultAt(paths, {}, { lock: { timeoutMs: 5_000 } }).set("a", "value");
    clearInterval(ticker);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(ticks).toBeGreaterThanOrEqual(10); // timers kept firing while the set waited
    expect(vaultAt(paths).get("a")).toBe("value");
    expect(existsSync(lock)).toBe(false);
  });

  it("breaks a lock older than staleMs even when its pid looks alive (pid reuse)", async () => {
    const paths = tempPaths();
    mkdirSync(paths.dataDir, { recursive: true });
    const lock = `${paths.vaultFile}.lock`;
    writeFileSync(lock, JSON.stringify({ pid: process.pid, host: hostname(), token: "ancient" }));
    const old = new Date(Date.now() - 120_000);
    utimesSync(lock, old, old);
    await vaultAt(paths, {}, { lock: { timeoutMs: 1_000 } }).set("a", "value");
    expect(vaultAt(paths).get("a")).toBe("value");
  });

  it("releases the lock when the critical section throws", async () => {
    const paths = tempPaths();
    mkdirSync(paths.dataDir, { recursive: true });
    const lock = `${paths.vaultFile}.lock`;
    await expect(
      withFileLock(lock, () => {
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(await withFileLock(lock, () => 42, { timeoutMs: 100 })).toBe(42);
  });
});

describe("the daemon while another process holds the vault", () => {
  it("keeps answering while PUT /api/vault waits for the lock, then stores the secret", async () => {
    const dataDir = tempDataDir();
    const daemon = await startDaemon({ [KEYRING_ENV]: "0", ASSISTANT_LOG: "warn" }, dataDir);
    try {
      // What `assistant vault set` leaves while it writes: a lock naming a live process.
      const lock = join(dataDir, "vault.json.lock");
      writeFileSync(lock, JSON.stringify({ pid: process.pid, host: hostname(), token: "cli" }));
      const put = api(daemon, "PUT", "/api/vault", { key: "k", value: "v" });
      for (let i = 0; i < 5; i++) {
        const started = Date.now();
        expect((await raw(`${daemon.url}/api/health`)).status).toBe(200);
        expect(Date.now() - started).toBeLessThan(250);
        await new Promise((r) => setTimeout(r, 50));
      }
      rmSync(lock);
      expect((await put).status).toBe(200);
      expect((await api(daemon, "GET", "/api/vault")).json().items).toEqual([{ key: "k" }]);
    } finally {
      await daemon.stop();
    }
  });
});
