// bench/plugins: what a plugin tool call costs once the plugin is instantiated (instantiate once, call many).
//   1. the plugin call alone (worker round trip, input and output copied, memory reset);
//   2. the whole tool call through the runner the agent and POST /api/tools/:name/invoke use: argument
//      validation, the policy chain, the plugin call, reputation, output fencing, events in SQLite.
// Target: p50 of 2. under 1 ms. The plugin is the echo test plugin compiled from AssemblyScript.
// Run: npm run bench:plugins [-- --calls 3000]
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { dataPaths } from "../../packages/assistant/src/config/paths.ts";
import { readSettings } from "../../packages/assistant/src/config/settings.ts";
import { EventLog } from "../../packages/assistant/src/events/eventLog.ts";
import { loadPlugin } from "../../packages/assistant/src/plugins/runtime.ts";
import { createPluginServices } from "../../packages/assistant/src/plugins/services.ts";
import { openDatabase } from "../../packages/assistant/src/store/database.ts";
import { createApprovalServices } from "../../packages/assistant/src/tools/approvals/services.ts";
import { createToolServices } from "../../packages/assistant/src/tools/services.ts";
import { buildTestPlugin } from "../../packages/assistant/test/plugins/buildFixtures.ts";

const { values } = parseArgs({ options: { calls: { type: "string", default: "3000" } } });
const calls = Number(values.calls);
const root = join(tmpdir(), `assistant-bench-plugins-${process.pid}`);
const paths = dataPaths(root);
const pluginDir = join(paths.pluginsDir, "echo");
mkdirSync(pluginDir, { recursive: true });
const wasm = await buildTestPlugin("echo");
writeFileSync(join(pluginDir, "plugin.wasm"), wasm);
writeFileSync(
  join(pluginDir, "plugin.json"),
  JSON.stringify({
    id: "echo",
    name: "Echo",
    version: "1.0.0",
    kind: "tool",
    exports: ["echo"],
    tools: [
      {
        name: "echo",
        description: "Echo",
        export: "echo",
        parameters: { type: "object", properties: { text: { type: "string" } } },
      },
    ],
  }),
);
writeFileSync(paths.toolsPolicy, "require_approval: []\n");

const pct = (xs: number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};
const report = (label: string, ms: number[]) =>
  console.log(`${label}: p50 ${pct(ms, 50).toFixed(3)} ms, p99 ${pct(ms, 99).toFixed(3)} ms (${ms.length} calls)`);

// 1. The plugin call alone.
const limits = { timeoutMs: 5000, maxMemoryPages: 1024, fuel: 100_000_000_000, maxOutputBytes: 1024 * 1024 };
const instance = await loadPlugin(
  wasm,
  {
    allowedHosts: [],
    config: {},
    fetch: () => Promise.reject(new Error("no")),
    files: () => Promise.reject(new Error("no")),
  },
  limits,
);
for (let i = 0; i < 200; i++) await instance.call("echo", '{"text":"warm"}');
const raw: number[] = [];
for (let i = 0; i < calls; i++) {
  const started = performance.now();
  await instance.call("echo", `{"text":"call ${i}"}`);
  raw.push(performance.now() - started);
}
await instance.close();
report("1. plugin call", raw);

// 2. The same call as a tool, through the daemon's runner (real assistant.db, policy file, reputation).
const db = openDatabase(paths.database);
const events = new EventLog(db);
const env = {};
const settings = readSettings(env);
const approvals = createApprovalServices({ db, settings, events });
const vault = { has: () => false, get: () => "" };
const tools = createToolServices({ paths, env, settings, vault, approvals, events, logger: { warn: () => {} } });
const logger = { warn: () => {}, info: () => {} };
const plugins = createPluginServices({
  db,
  paths,
  settings,
  events,
  logger,
  tools: tools.registry,
  secret: () => null,
});
for (let i = 0; i < 200; i++) await tools.runner.invoke("echo__echo", { text: "warm" });
const viaRunner: number[] = [];
for (let i = 0; i < calls; i++) {
  const started = performance.now();
  const result = await tools.runner.invoke("echo__echo", { text: `call ${i}` });
  viaRunner.push(performance.now() - started);
  if (result.status !== "ok") throw new Error(`call failed: ${result.output}`);
}
report("2. plugin tool call through the runner (target p50 < 1 ms)", viaRunner);

await plugins.registry.close();
approvals.close();
db.close();
rmSync(root, { recursive: true, force: true });
