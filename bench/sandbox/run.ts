// bench/sandbox: what the bubblewrap sandbox adds to one run_command child (tools/commandSandbox.ts). The same
// short program (`true`, then `cat` of a small file) runs through runProcessTree, the spawner run_command uses,
// bare and wrapped by the sandbox, interleaved so both see the same machine load. Target: the sandbox adds under
// 20 ms per command (p50 difference).
// Run: npm run bench:sandbox [-- --runs 200]
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { runProcessTree } from "../../packages/assistant/src/tools/childProcess.ts";
import { detectCommandSandbox } from "../../packages/assistant/src/tools/commandSandbox.ts";
import { resolveExecutable } from "../../packages/assistant/src/tools/policy/commands.ts";

const { values } = parseArgs({ options: { runs: { type: "string", default: "200" } } });
const runs = Number(values.runs);
const root = join(tmpdir(), `assistant-bench-sandbox-${process.pid}`);
const dataDir = join(root, "data");
const workspaceDir = join(dataDir, "workspace");
mkdirSync(workspaceDir, { recursive: true });
writeFileSync(join(root, "small.txt"), "hello\n");

const status = detectCommandSandbox({ dataDir, workspaceDir, readOnly: [], setting: "auto" });
if (!status.available) {
  console.error(`bench:sandbox: no sandbox here (${status.reason}); nothing to measure`);
  process.exit(1);
}
const sandbox = status.sandbox;

function program(name: string): string {
  const found = resolveExecutable(name);
  if ("error" in found) throw new Error(found.error);
  return found.path;
}

async function timeOne(file: string, args: string[], wrapped: boolean): Promise<number> {
  let run = { file, args };
  if (wrapped) {
    const w = sandbox.wrap(file, args, root);
    if ("error" in w) throw new Error(w.error);
    run = w;
  }
  const started = process.hrtime.bigint();
  const result = await runProcessTree(run.file, run.args, {
    cwd: root,
    env: { PATH: "/usr/bin:/bin" },
    timeoutMs: 10_000,
    maxBytes: 1024 * 1024,
  });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.code !== 0) throw new Error(`${file} exited ${result.code}: ${result.stderr.toString()}`);
  return ms;
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
const fmt = (n: number) => `${n.toFixed(2)} ms`;

console.log(`sandbox: ${status.description}`);
for (const [label, file, args] of [
  ["true", program("true"), []],
  ["cat small.txt", program("cat"), [join(root, "small.txt")]],
] as const) {
  const bare: number[] = [];
  const boxed: number[] = [];
  for (let i = 0; i < 10; i++) {
    await timeOne(file, [...args], false);
    await timeOne(file, [...args], true);
  }
  for (let i = 0; i < runs; i++) {
    bare.push(await timeOne(file, [...args], false));
    boxed.push(await timeOne(file, [...args], true));
  }
  bare.sort((a, b) => a - b);
  boxed.sort((a, b) => a - b);
  const added = pct(boxed, 0.5) - pct(bare, 0.5);
  console.log(
    `${label} (${runs} runs each): bare p50 ${fmt(pct(bare, 0.5))} p99 ${fmt(pct(bare, 0.99))} | sandboxed p50 ${fmt(pct(boxed, 0.5))} p99 ${fmt(pct(boxed, 0.99))} | added p50 ${fmt(added)} (target < 20 ms: ${added < 20 ? "met" : "MISSED"})`,
  );
}
rmSync(root, { recursive: true, force: true });
