// bench/startup: time from spawn to healthy and idle RSS of the daemon vs a bare Fastify server (issue 2 targets:
// ready < 1.5x, idle RSS < 1.3x), plus the wall time of `assistant paths` and `assistant vault list` (< 150 ms).
// Run: npm run bench:startup [-- --runs 5 --idle-secs 10]
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: { runs: { type: "string", default: "5" }, "idle-secs": { type: "string", default: "10" } },
});
const runs = Number(values.runs);
const idleSecs = Number(values["idle-secs"]);
const root = resolve(import.meta.dirname, "..", "..");
// What a user runs: the bin launchers (they pick the bundle built by `npm run build`).
const daemonEntry = join(root, "packages", "assistant", "bin", "assistant-daemon.mjs");
const cliEntry = join(root, "packages", "assistant", "bin", "assistant.mjs");
const bareEntry = join(import.meta.dirname, "bare-server.ts");

async function freePort(): Promise<number> {
  return new Promise((ok) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => ok(port));
    });
  });
}

async function waitHealthy(port: number, started: bigint): Promise<number> {
  for (;;) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/health`);
      if (res.ok) return Number(process.hrtime.bigint() - started) / 1e6;
    } catch {}
    await new Promise((r) => setTimeout(r, 2));
  }
}

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

interface Sample {
  readyMs: number;
  child: ChildProcess;
}

async function launch(kind: "daemon" | "bare", dataDir: string): Promise<Sample> {
  const port = await freePort();
  const env = {
    ...process.env,
    ASSISTANT_DATA_DIR: dataDir,
    ASSISTANT_PORT: String(port),
    PORT: String(port),
    ASSISTANT_LOG: "warn",
  };
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, [kind === "daemon" ? daemonEntry : bareEntry], { env, stdio: "ignore" });
  const readyMs = await waitHealthy(port, started);
  return { readyMs, child };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const done = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  await done;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const dataDir = mkdtempSync(join(tmpdir(), "assistant-bench-"));
try {
  // Warm-up: first start creates the data dir, token, database; and warms the OS file cache for both.
  for (const kind of ["daemon", "bare"] as const) await stop((await launch(kind, dataDir)).child);

  const ready: Record<"daemon" | "bare", number[]> = { daemon: [], bare: [] };
  for (let i = 0; i < runs; i++) {
    for (const kind of ["daemon", "bare"] as const) {
      const sample = await launch(kind, dataDir);
      ready[kind].push(sample.readyMs);
      await stop(sample.child);
    }
  }

  const daemon = await launch("daemon", dataDir);
  const bare = await launch("bare", dataDir);
  await new Promise((r) => setTimeout(r, idleSecs * 1000));
  const rss = { daemon: rssMiB(daemon.child.pid!), bare: rssMiB(bare.child.pid!) };
  await stop(daemon.child);
  await stop(bare.child);

  const cli = (args: string[]) => {
    const times: number[] = [];
    for (let i = 0; i < 10; i++) {
      const started = process.hrtime.bigint();
      const result = spawnSync(process.execPath, [cliEntry, ...args], {
        env: { ...process.env, ASSISTANT_DATA_DIR: dataDir },
      });
      if (result.status !== 0) throw new Error(`assistant ${args.join(" ")} failed: ${result.stderr}`);
      times.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    return median(times);
  };
  const paths = cli(["paths"]);
  const vaultList = cli(["vault", "list"]);

  const r = (n: number) => n.toFixed(1);
  const readyRatio = median(ready.daemon) / median(ready.bare);
  const rssRatio = rss.daemon / rss.bare;
  console.log(`startup (median of ${runs}, spawn -> /api/health 200)`);
  console.log(`  daemon        ${r(median(ready.daemon))} ms`);
  console.log(`  bare fastify  ${r(median(ready.bare))} ms`);
  console.log(`  ratio         ${readyRatio.toFixed(2)}  (target < 1.5) ${readyRatio < 1.5 ? "PASS" : "FAIL"}`);
  console.log(`idle RSS after ${idleSecs} s`);
  console.log(`  daemon        ${r(rss.daemon)} MiB`);
  console.log(`  bare fastify  ${r(rss.bare)} MiB`);
  console.log(`  ratio         ${rssRatio.toFixed(2)}  (target < 1.3) ${rssRatio < 1.3 ? "PASS" : "FAIL"}`);
  console.log("CLI wall time (median of 10)");
  console.log(`  assistant paths       ${r(paths)} ms  (target < 150) ${paths < 150 ? "PASS" : "FAIL"}`);
  console.log(`  assistant vault list  ${r(vaultList)} ms  (target < 150) ${vaultList < 150 ? "PASS" : "FAIL"}`);
} finally {
  if (existsSync(dataDir)) rmSync(dataDir, { recursive: true, force: true });
}
