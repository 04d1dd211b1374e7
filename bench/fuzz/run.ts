// bench/fuzz: a long run of the HTTP fuzzer of test/server/fuzz.test.ts against a real daemon: every operation of
// /api/openapi.json with hostile bodies, paths, query strings, methods and credentials, six in flight, GET
// /api/health timed every 50 requests. Targets (issue 14): no 5xx, the error shape on every error, no reset,
// /api/health within 1 s throughout. Chat routes answer through a scripted model server; the embedded model
// path names no file, so nothing is downloaded.
// Run: npm run bench:fuzz [-- --requests 20000 --seed 1]
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { CHAT_CATEGORIES } from "../../packages/assistant/src/llm/classify.ts";
import { startOpenAiServer } from "../../packages/assistant/test/llm/servers/openaiServer.ts";
import type { OpenApiDocument } from "../../packages/assistant/test/server/fuzz/cases.ts";
import { runFuzz } from "../../packages/assistant/test/server/fuzz/runFuzz.ts";
import { benchRouterYaml, startBenchDaemon } from "../daemon.ts";

const { values } = parseArgs({
  options: { requests: { type: "string", default: "20000" }, seed: { type: "string", default: "1" } },
});
const requests = Number(values.requests);
const maxBodyBytes = 1024 * 1024; // the daemon's default limit

const llm = await startOpenAiServer();
const daemon = await startBenchDaemon("fuzz", benchRouterYaml(llm.url, [...CHAT_CATEGORIES]), {
  ASSISTANT_MEMORY_LEARNING: "0",
  ASSISTANT_EMBEDDED_MODEL_PATH: join(tmpdir(), "assistant-bench-fuzz-no-model.gguf"),
  ASSISTANT_MAX_BODY_BYTES: String(maxBodyBytes),
});
const doc = (await (
  await fetch(`${daemon.url}/api/openapi.json`, { headers: { authorization: `Bearer ${daemon.token}` } })
).json()) as OpenApiDocument;

const report = await runFuzz(doc, {
  baseUrl: daemon.url,
  token: daemon.token,
  maxBodyBytes,
  requests,
  seed: Number(values.seed),
  onProgress: (sent) => {
    if (sent % 5000 === 0) console.log(`  ${sent} sent`);
  },
});
await daemon.stop();
await llm.close();

const histogram = Object.entries(report.statuses)
  .map(([status, count]) => `${status}: ${count}`)
  .join(", ");
console.log(`requests: ${report.requests} in ${(report.elapsedMs / 1000).toFixed(1)} s, six in flight`);
console.log(`statuses: ${histogram}`);
console.log(
  `/api/health: ${report.health.checks} checks, slowest ${report.health.slowestMs} ms (target < 1000), ${report.health.failures.length} failures`,
);
console.log(`in flight during the slowest check: ${report.health.slowestDuring.join("; ") || "nothing"}`);
console.log("slowest answers (upload and download included):");
for (const { ms, request } of report.slowest) console.log(`  ${ms} ms  ${request}`);
console.log(`contract violations: ${report.violations.length}`);
for (const line of [...report.health.failures, ...report.violations].slice(0, 20)) console.log(`  ${line}`);
if (report.violations.length > 0 || report.health.failures.length > 0) process.exitCode = 1;
