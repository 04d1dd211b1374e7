import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { packageRoot } from "../helpers/daemon.ts";

// The WASI warning is dropped from plugin workers' stderr, and only it: a real Worker that imports node:wasi (as
// the plugin SDK's worker does) and writes lines of its own, in a child Node process whose stderr is read whole.

const WARNING = "ExperimentalWarning: WASI is an experimental feature";

function run(script: string): { stderr: string; status: number | null } {
  const result = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
    cwd: packageRoot,
    encoding: "utf8",
    timeout: 20_000,
  });
  return { stderr: result.stderr, status: result.status };
}

const workerBody = JSON.stringify(
  'import("node:wasi").then(() => { console.error("plugin worker says hi"); process.emitWarning("another warning"); });',
);
const startWorker = `new Worker(${workerBody}, { eval: true }).once("exit", () => setTimeout(() => {}, 100))`;

describe("the WASI warning of plugin workers", () => {
  it("is printed by a worker that imports node:wasi (what the filter is for)", () => {
    const { stderr } = run(`import { Worker } from "node:worker_threads"; ${startWorker};`);
    expect(stderr).toContain(WARNING);
  });

  it("is dropped from the stderr of workers started by a plugin load; their other output and warnings pass", () => {
    const module = JSON.stringify(join(packageRoot, "src", "plugins", "wasiWarning.ts"));
    const { stderr, status } = run(
      `import { Worker } from "node:worker_threads";
       const { withoutWasiWarning } = await import(${module});
       await withoutWasiWarning(async () => { ${startWorker}; await new Promise((r) => setTimeout(r, 50)); });`,
    );
    expect(status).toBe(0);
    expect(stderr).not.toContain(WARNING);
    expect(stderr).toContain("plugin worker says hi");
    expect(stderr).toContain("Warning: another warning");
  });

  it("is dropped from the daemon's own thread when a load imports node:wasi, even with loads overlapping", () => {
    const module = JSON.stringify(join(packageRoot, "src", "plugins", "wasiWarning.ts"));
    const { stderr, status } = run(
      `const { withoutWasiWarning } = await import(${module});
       const slow = withoutWasiWarning(() => new Promise((r) => setTimeout(r, 50)));
       await withoutWasiWarning(() => import("node:wasi"));
       await slow;
       process.emitWarning("after the loads");`,
    );
    expect(status).toBe(0);
    expect(stderr).not.toContain(WARNING);
    expect(stderr).toContain("Warning: after the loads");
  });

  it("keeps the warnings of the daemon's own thread and of workers started outside a plugin load", () => {
    const module = JSON.stringify(join(packageRoot, "src", "plugins", "wasiWarning.ts"));
    const { stderr } = run(
      `import { Worker } from "node:worker_threads";
       const { withoutWasiWarning } = await import(${module});
       await withoutWasiWarning(async () => {});
       ${startWorker};`,
    );
    expect(stderr).toContain(WARNING);
  });
});
