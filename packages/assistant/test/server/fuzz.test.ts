import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { CHAT_CATEGORIES } from "../../src/llm/classify.ts";
import { scriptedRouterYaml, startScriptedDaemon } from "../agent/helpers.ts";
import { api, type TestDaemon, tempDataDir } from "../helpers/daemon.ts";
import { type ScriptedServer, startOpenAiServer } from "../llm/servers/openaiServer.ts";
import type { OpenApiDocument } from "./fuzz/cases.ts";
import { runFuzz } from "./fuzz/runFuzz.ts";

// Hostile HTTP input against the real daemon: every operation of /api/openapi.json with malformed, wrong-typed,
// huge-number, deeply nested, wide and over-limit bodies, bad content types, odd path segments, 3,000 query
// parameters, undeclared methods and bad credentials, six in flight, GET /api/health timed every 50 requests.
// Bounded for CI; `npm run bench:fuzz` runs longer. The chat routes answer through a scripted model server.

const MAX_BODY_BYTES = 65_536; // small, so that over-limit bodies stay quick to send
const REQUESTS = 3_000;

let llm: ScriptedServer;
let daemon: TestDaemon;

beforeAll(async () => {
  llm = await startOpenAiServer();
  const dataDir = tempDataDir();
  const routes = Object.fromEntries(CHAT_CATEGORIES.map((category) => [category, "fuzz-model"]));
  writeFileSync(join(dataDir, "llm_router.yaml"), scriptedRouterYaml(llm.url, routes));
  daemon = await startScriptedDaemon(dataDir, {
    ASSISTANT_MAX_BODY_BYTES: String(MAX_BODY_BYTES),
    ASSISTANT_LOG: "warn",
  });
});
afterAll(async () => {
  expect(await daemon.stop()).toBe(0);
  await llm.close();
});

it("keeps the error contract and answers /api/health within 1 s through thousands of hostile requests", async () => {
  const doc = (await api(daemon, "GET", "/api/openapi.json")).json<OpenApiDocument>();
  const report = await runFuzz(doc, {
    baseUrl: daemon.url,
    token: daemon.token,
    maxBodyBytes: MAX_BODY_BYTES,
    requests: REQUESTS,
    seed: 1,
  });
  const summary = JSON.stringify({ statuses: report.statuses, health: report.health, ms: report.elapsedMs });
  expect(report.violations, summary).toEqual([]);
  expect(report.health.failures, summary).toEqual([]);
  expect(report.requests).toBe(REQUESTS);
  expect(report.health.checks).toBeGreaterThan(REQUESTS / 50);
  // The refusals the run must have met: over-limit bodies answered (413), nesting past the limit refused (400).
  expect(report.byKind.over_limit?.["413"]).toBeGreaterThan(50);
  expect(report.byKind.deep?.["400"]).toBeGreaterThan(50);
  expect(daemon.output()).not.toContain("unhandled error");
}, 120_000);
