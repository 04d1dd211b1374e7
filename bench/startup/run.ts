// bench/startup: time from spawn to a healthy /api/health and idle RSS of every way people start the daemon, side
// by side with a bare Fastify server (bare-server.ts) started by the same Node, interleaved, medians of --runs:
//   assistant-daemon               the bare daemon entry (issue 2: ready < 1.5x, idle RSS < 1.3x)
//   assistant start --foreground   the daemon in the CLI's process  \
//   assistant start                CLI -> supervisor -> daemon       > issue 16: ready < 1.2x, idle RSS < 1.3x
//   assistant up                   the same, plus the version check /
// For start/up the ready time is when /api/health first answers (the command itself returns a moment later, after
// its own check: printed too); the RSS is the daemon's, then the daemon's plus the supervisor's private memory
// (RssAnon: the rest of its RSS is the node binary's pages, shared with the daemon), with their sum beside.
// Plus the wall time of `assistant paths` and `assistant vault list` (< 150 ms).
// Run: npm run bench:startup [-- --runs 7 --idle-secs 10 --dist]
// The bin launchers run the bundle only while it is newer than every source file: on a checkout being edited, pass
// --dist to run the bundle's entries directly (the launcher's own cost, ~5 ms, is then left out).
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "7" },
    "idle-secs": { type: "string", default: "10" },
    dist: { type: "boolean", default: false },
  },
});
const runs = Number(values.runs);
const idleSecs = Number(values["idle-secs"]);
const root = resolve(import.meta.dirname, "..", "..");
const pkg = join(root, "packages", "assistant");
// What a user runs: the bin launchers (they pick the bundle built by `npm run build`), or with --dist the bundle.
const bin = (name: string) => (values.dist ? join(pkg, "dist", `${name}.mjs`) : join(pkg, "bin", `${name}.mjs`));
const daemonEntry = bin("assistant-daemon");
const cliEntry = bin("assistant");
const bareEntry = join(import.meta.dirname, "bare-server.ts");

type Kind = "bare" | "daemon" | "foreground" | "start" | "up";
const KINDS: Kind[] = ["bare", "daemon", "foreground", "start", "up"];
const LABEL: Record<Kind, string> = {
  bare: "bare fastify",
  daemon: "assistant-daemon",
  foreground: "start --foreground",
  start: "start",
  up: "up",
};

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

function rssMiB(pid: number, field: "VmRSS" | "RssAnon" = "VmRSS"): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)![1]) / 1024;
}

interface Sample {
  kind: Kind;
  readyMs: number;
  /** start/up: when the command returned (it waits for the daemon, then checks it). */
  commandMs?: number;
  /** The process serving /api/health. */
  pid: number;
  supervisorPid?: number;
  child: ChildProcess;
  env: NodeJS.ProcessEnv;
}

async function launch(kind: Kind, dataDir: string): Promise<Sample> {
  const port = await freePort();
  const env = {
    ...process.env,
    ASSISTANT_DATA_DIR: dataDir,
    ASSISTANT_PORT: String(port),
    PORT: String(port),
    ASSISTANT_LOG: "warn",
  };
  const args = {
    bare: [bareEntry],
    daemon: [daemonEntry],
    foreground: [cliEntry, "start", "--foreground"],
    start: [cliEntry, "start"],
    up: [cliEntry, "up"],
  }[kind];
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, args, { env, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (chunk) => (stderr += chunk));
  const exited = new Promise<number>((ok) =>
    child.once("exit", () => ok(Number(process.hrtime.bigint() - started) / 1e6)),
  );
  // start/up return once the daemon is up, maybe before this poll sees it; the others must not exit at all.
  const detaches = kind === "start" || kind === "up";
  const failed = exited.then(() =>
    detaches && child.exitCode === 0 ? new Promise<never>(() => {}) : Promise.reject(),
  );
  const readyMs = await Promise.race([waitHealthy(port, started), failed]).catch(() => {
    throw new Error(`${LABEL[kind]} exited before it was healthy: ${stderr}`);
  });
  if (!detaches) return { kind, readyMs, pid: child.pid!, child, env };
  const commandMs = await exited;
  if (child.exitCode !== 0) throw new Error(`assistant ${kind} failed: ${stderr}`);
  const info = JSON.parse(readFileSync(join(dataDir, "daemon.json"), "utf8")) as {
    pid: number;
    supervisor_pid: number;
  };
  return { kind, readyMs, commandMs, pid: info.pid, supervisorPid: info.supervisor_pid, child, env };
}

async function stop(sample: Sample): Promise<void> {
  if (sample.supervisorPid !== undefined) {
    const result = spawnSync(process.execPath, [cliEntry, "stop"], { env: sample.env });
    if (result.status !== 0) throw new Error(`assistant stop failed: ${result.stderr}`);
    return;
  }
  if (sample.child.exitCode !== null) return;
  const done = new Promise((r) => sample.child.once("exit", r));
  sample.child.kill("SIGTERM");
  await done;
}

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/** Whether the launchers ran the sources instead of the bundle (a source file newer than the bundle). */
function launchersRanSources(): boolean {
  if (values.dist) return false;
  const bundle = join(pkg, "dist", "assistant.mjs");
  if (!existsSync(bundle)) return true;
  const built = statSync(bundle).mtimeMs;
  return [join(pkg, "src"), join(root, "packages", "client", "src")].some((dir) => newestSource(dir) > built);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

// One data directory per kind: the idle RSS is measured with all of them running at once.
const dataDirs = Object.fromEntries(
  KINDS.map((kind) => [kind, mkdtempSync(join(tmpdir(), `assistant-bench-${kind}-`))]),
) as Record<Kind, string>;
try {
  const sourcesBefore = launchersRanSources();
  // Warm-up: the first start creates the data dir, token and database, fills the compile cache and warms the OS
  // file cache for every kind.
  for (const kind of KINDS) await stop(await launch(kind, dataDirs[kind]));

  const ready = Object.fromEntries(KINDS.map((kind) => [kind, [] as number[]])) as Record<Kind, number[]>;
  const command: Record<"start" | "up", number[]> = { start: [], up: [] };
  for (let i = 0; i < runs; i++) {
    for (const kind of KINDS) {
      const sample = await launch(kind, dataDirs[kind]);
      ready[kind].push(sample.readyMs);
      if (kind === "start" || kind === "up") command[kind].push(sample.commandMs!);
      await stop(sample);
    }
  }

  const running: Sample[] = [];
  for (const kind of KINDS) running.push(await launch(kind, dataDirs[kind]));
  await new Promise((r) => setTimeout(r, idleSecs * 1000));
  const rss = Object.fromEntries(running.map((s) => [s.kind, rssMiB(s.pid)])) as Record<Kind, number>;
  const supervisorRss = Object.fromEntries(
    running
      .filter((s) => s.supervisorPid !== undefined)
      .map((s) => [s.kind, { rss: rssMiB(s.supervisorPid!), own: rssMiB(s.supervisorPid!, "RssAnon") }]),
  ) as Record<"start" | "up", { rss: number; own: number }>;
  for (const sample of running) await stop(sample);
  const sourcesAfter = launchersRanSources();

  const cli = (args: string[]) => {
    const times: number[] = [];
    for (let i = 0; i < 10; i++) {
      const started = process.hrtime.bigint();
      const result = spawnSync(process.execPath, [cliEntry, ...args], {
        env: { ...process.env, ASSISTANT_DATA_DIR: dataDirs.daemon },
      });
      if (result.status !== 0) throw new Error(`assistant ${args.join(" ")} failed: ${result.stderr}`);
      times.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    return median(times);
  };
  const paths = cli(["paths"]);
  const vaultList = cli(["vault", "list"]);

  const r = (n: number) => n.toFixed(1);
  const verdict = (ratio: number, target: number) => `(target < ${target}) ${ratio < target ? "PASS" : "FAIL"}`;
  const readyTarget = (kind: Kind) => (kind === "daemon" ? 1.5 : 1.2);
  const bareReady = median(ready.bare);
  console.log(
    `startup: spawn -> /api/health 200, median of ${runs}, interleaved${values.dist ? " (bundle entries)" : ""}`,
  );
  for (const kind of KINDS) {
    const ms = median(ready[kind]);
    const ratio = ms / bareReady;
    const line = `  ${LABEL[kind].padEnd(20)} ${r(ms).padStart(7)} ms`;
    const extra = kind === "start" || kind === "up" ? `   (command returned at ${r(median(command[kind]))} ms)` : "";
    console.log(
      kind === "bare" ? line : `${line}  ratio ${ratio.toFixed(2)} ${verdict(ratio, readyTarget(kind))}${extra}`,
    );
  }
  console.log(
    `idle RSS after ${idleSecs} s (the process serving /api/health; start/up: the daemon, and with its supervisor)`,
  );
  for (const kind of KINDS) {
    const ratio = rss[kind] / rss.bare;
    console.log(
      kind === "bare"
        ? `  ${LABEL[kind].padEnd(20)} ${r(rss[kind]).padStart(7)} MiB`
        : `  ${LABEL[kind].padEnd(20)} ${r(rss[kind]).padStart(7)} MiB  ratio ${ratio.toFixed(2)} ${verdict(ratio, 1.3)}`,
    );
    if (kind === "start" || kind === "up") {
      // Most of an idle Node's RSS is the node binary's pages (RssFile), shared with the daemon: the supervisor
      // adds its private memory (RssAnon) to the machine's.
      const { rss: all, own } = supervisorRss[kind];
      const withSupervisor = (rss[kind] + own) / rss.bare;
      console.log(
        `    + supervisor       ${r(own).padStart(7)} MiB  ratio ${withSupervisor.toFixed(2)} ${verdict(withSupervisor, 1.3)}` +
          `   (its private memory; its RSS is ${r(all)} MiB, the rest shared with the daemon: daemon + RSS = ${r(rss[kind] + all)} MiB, ${((rss[kind] + all) / rss.bare).toFixed(2)}x)`,
      );
    }
  }
  console.log("CLI wall time (median of 10)");
  console.log(`  assistant paths       ${r(paths)} ms  (target < 150) ${paths < 150 ? "PASS" : "FAIL"}`);
  console.log(`  assistant vault list  ${r(vaultList)} ms  (target < 150) ${vaultList < 150 ? "PASS" : "FAIL"}`);
  if (sourcesBefore || sourcesAfter) {
    console.log(
      "WARNING: sources were newer than the bundle during the run, so the launchers ran the TypeScript sources " +
        "(run `npm run build`, or pass --dist on a checkout being edited)",
    );
  }
} finally {
  for (const dir of Object.values(dataDirs)) rmSync(dir, { recursive: true, force: true });
}
