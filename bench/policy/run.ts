// bench/policy: cost of one permission decision (tools/policy/engine.ts). Builds a 200-rule policy (paths,
// commands, domains, devices, persistent decisions) with the built-in `protected: daemon data` rule, warms up, then times 100k mixed decisions. Target: p99 below
// 50 µs per decision.
// Timing: one decision takes well under a microsecond, below what a per-call timer resolves reliably, so calls are
// timed in batches of 100 with process.hrtime.bigint(); p50/p99 are over the per-decision average of each batch.
// A second pass times single calls too (coarse, includes timer overhead) to show the tail.
// Run: npm run bench:policy [-- --decisions 100000]
import { parseArgs } from "node:util";
import { dataPaths } from "../../packages/assistant/src/config/paths.ts";
import { toolsPolicySchema } from "../../packages/assistant/src/config/schemas/toolsPolicy.ts";
import { daemonFiles } from "../../packages/assistant/src/tools/policy/daemonFiles.ts";
import { createPolicyEngine } from "../../packages/assistant/src/tools/policy/engine.ts";
import type { PersistentDecision, ToolRequest } from "../../packages/assistant/src/tools/policy/types.ts";

const { values } = parseArgs({ options: { decisions: { type: "string", default: "100000" } } });
const total = Number(values.decisions);
const BATCH = 100;

const n = (count: number, f: (i: number) => string) => Array.from({ length: count }, (_, i) => f(i));
const policy = toolsPolicySchema.parse({
  allowed_read_paths: n(40, (i) => `/srv/data/project-${i}`),
  allowed_write_paths: n(30, (i) => `/srv/data/project-${i}/out`),
  allowed_commands: [...n(29, (i) => `tool${i}`), "sh"],
  blocked_commands: n(10, (i) => `bad${i}`),
  allowed_web_domains: [...n(40, (i) => `site${i}.example.com`), "127.0.0.1"],
  blocked_web_domains: n(20, (i) => `ads${i}.example.net`),
  allowed_device_interfaces: ["usb", "local_media"],
  blocked_device_interfaces: ["network", "synthetic_input"],
  browser_enabled: true,
  browser_allowed_domains: n(15, (i) => `b${i}.example.org`),
  browser_blocked_domains: n(10, (i) => `x${i}.example.org`),
  require_approval: ["write_file", "run_command", "device_invoke"],
});
const decisions: PersistentDecision[] = [
  ...n(20, (i) => `tool${i}`).map((scope, i) => ({
    id: `c${i}`,
    tool: "run_command",
    scope,
    effect: "allow" as const,
  })),
  ...n(10, (i) => `/srv/data/project-${i}/private`).map((scope, i) => ({
    id: `p${i}`,
    tool: "read_file",
    scope,
    effect: "deny" as const,
  })),
  ...n(10, (i) => `site${i}.example.com`).map((scope, i) => ({
    id: `w${i}`,
    tool: "web_fetch",
    scope,
    effect: "deny" as const,
  })),
];
const engine = createPolicyEngine({
  policy,
  policyFile: "/bench/tools_policy.yaml",
  cwd: "/srv",
  decisions,
  daemonFiles: daemonFiles({ paths: dataPaths("/srv/data/assistant"), extraNoWrite: ["/srv/journal.jsonl"] }),
});

const url = (s: string) => new URL(s);
const requests: ToolRequest[] = [
  { kind: "read", tool: "read_file", path: "/srv/data/project-39/deep/a/b/c.txt" },
  { kind: "read", tool: "read_file", path: "/srv/data/project-3/private/key" },
  { kind: "read", tool: "read_file", path: "/etc/passwd" },
  { kind: "read", tool: "read_file", path: "/srv/data/project-1-evil/x" },
  { kind: "read", tool: "read_file", path: "/srv/data/assistant/auth_token" },
  { kind: "read", tool: "read_file", path: "/proc/self/environ" },
  { kind: "write", tool: "write_file", path: "/srv/data/assistant/tools_policy.yaml" },
  { kind: "write", tool: "write_file", path: "/srv/data/project-2/out/report.md" },
  { kind: "command", tool: "run_command", executable: "tool7", argv: ["tool7", "--flag", "x"] },
  { kind: "command", tool: "run_command", executable: "tool25", argv: ["tool25"] },
  { kind: "command", tool: "run_command", executable: "bad3", argv: ["bad3"] },
  { kind: "command", tool: "run_command", executable: "curl", argv: ["curl", "x"] },
  // launchers (launchers.ts): shell code read command by command, and a runner reaching an unlisted interpreter
  {
    kind: "command",
    tool: "run_command",
    executable: "sh",
    argv: ["sh", "-c", 'git status --short && make test 2>&1 | tail -5; echo "$(date) done"'],
  },
  {
    kind: "command",
    tool: "run_command",
    executable: "env",
    argv: ["env", "FOO=1", "nice", "-n", "5", "python3", "-c", "import os"],
  },
  // an awk read under every awk's reading of its options, and watch's options read as getopt does
  {
    kind: "command",
    tool: "run_command",
    executable: "sh",
    argv: ["sh", "-c", "awk -bv n=1 -F: '$3 > n {print $1}' /etc/passwd | sort; watch -d -n 2 -x ls"],
  },
  { kind: "web", tool: "web_fetch", url: url("https://a.b.site33.example.com/page") },
  { kind: "web", tool: "web_fetch", url: url("https://site3.example.com/") },
  { kind: "web", tool: "web_fetch", url: url("https://ads4.example.net/") },
  { kind: "web", tool: "web_fetch", url: url("http://2130706433/") },
  { kind: "web", tool: "web_fetch", url: url("http://169.254.169.254/latest") },
  { kind: "web", tool: "web_fetch", url: url("https://example.com.evil.test/") },
  { kind: "device", tool: "device_invoke", interface: "usb" },
  { kind: "browser", tool: "browser_navigate", host: "www.b4.example.org" },
  { kind: "tool", tool: "message" },
];

function runBatch(start: number): void {
  for (let i = 0; i < BATCH; i++) {
    const d = engine.decide(requests[(start + i) % requests.length]!);
    if (d.rule.length === 0) throw new Error("decision without a rule");
  }
}

for (let i = 0; i < 20_000; i += BATCH) runBatch(i); // warm-up (JIT)

const perBatch: number[] = [];
for (let done = 0; done < total; done += BATCH) {
  const t0 = process.hrtime.bigint();
  runBatch(done);
  perBatch.push(Number(process.hrtime.bigint() - t0) / 1000 / BATCH);
}
const single: number[] = [];
for (let i = 0; i < total; i++) {
  const t0 = process.hrtime.bigint();
  engine.decide(requests[i % requests.length]!);
  single.push(Number(process.hrtime.bigint() - t0) / 1000);
}

const pct = (xs: number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};
const fmt = (x: number) => `${x.toFixed(2)} µs`;
const p99 = pct(perBatch, 99);
console.log(`policy: ${requests.length} request shapes, 200 list entries + ${decisions.length} decisions`);
console.log(`batched (${total} decisions, ${BATCH}/batch): p50 ${fmt(pct(perBatch, 50))}  p99 ${fmt(p99)}`);
console.log(
  `single calls (timer overhead included): p50 ${fmt(pct(single, 50))}  p99 ${fmt(pct(single, 99))}  max ${fmt(pct(single, 100))}`,
);
console.log(`target p99 < 50 µs: ${p99 < 50 && pct(single, 99) < 50 ? "met" : "MISSED"}`);
