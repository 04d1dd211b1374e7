import { type FuzzKind, type FuzzRequest, fuzzRequests, type OpenApiDocument } from "./cases.ts";
import { contractViolation } from "./contract.ts";
import { seededRandom } from "./random.ts";
import { sendFuzzRequest } from "./send.ts";

// Runs a fuzz campaign against a live daemon: `concurrency` requests in flight, GET /api/health every
// `healthEvery` requests (timed: a stalled event loop shows there first), and a tally of what came back.

export interface FuzzOptions {
  baseUrl: string;
  token: string;
  /** The daemon's ASSISTANT_MAX_BODY_BYTES: over-limit bodies are made just above it. */
  maxBodyBytes: number;
  requests: number;
  seed?: number;
  concurrency?: number;
  healthEvery?: number;
  /** The slowest /api/health answer allowed. */
  healthBudgetMs?: number;
  requestTimeoutMs?: number;
  onProgress?: (sent: number) => void;
}

export interface FuzzReport {
  requests: number;
  elapsedMs: number;
  /** Count per status code, plus "no answer". */
  statuses: Record<string, number>;
  /** The same, per mutation kind. */
  byKind: Partial<Record<FuzzKind, Record<string, number>>>;
  violations: string[];
  /** `slowestDuring`: the requests in flight when the slowest check was sent, the likely cause when it is slow. */
  health: { checks: number; slowestMs: number; slowestDuring: string[]; failures: string[] };
  /** The five slowest answers (upload and download included), slowest first. */
  slowest: { ms: number; request: string }[];
}

const HEALTH: FuzzRequest = {
  kind: "plausible",
  operation: "GET /api/health",
  method: "GET",
  path: "/api/health",
  headers: {},
};

export async function runFuzz(doc: OpenApiDocument, options: FuzzOptions): Promise<FuzzReport> {
  const { baseUrl, requests } = options;
  const healthEvery = options.healthEvery ?? 50;
  const healthBudgetMs = options.healthBudgetMs ?? 1000;
  const requestTimeoutMs = options.requestTimeoutMs ?? 15_000;
  const cases = fuzzRequests(doc, requests, {
    random: seededRandom(options.seed ?? 1),
    token: options.token,
    maxBodyBytes: options.maxBodyBytes,
  });
  const report: FuzzReport = {
    requests: 0,
    elapsedMs: 0,
    statuses: {},
    byKind: {},
    violations: [],
    health: { checks: 0, slowestMs: 0, slowestDuring: [], failures: [] },
    slowest: [],
  };
  const healthChecks: Promise<void>[] = [];
  let stalled = false; // health went unanswered: the run stops instead of timing out request after request
  const inFlight = new Set<FuzzRequest>();
  const checkHealth = async () => {
    const during = [...inFlight].map(describe);
    const outcome = await sendFuzzRequest(baseUrl, HEALTH, healthBudgetMs * 10);
    const ms = outcome.answer ? outcome.answer.ms : outcome.ms;
    if (!outcome.answer) stalled = true;
    report.health.checks++;
    if (ms >= report.health.slowestMs) Object.assign(report.health, { slowestMs: ms, slowestDuring: during });
    if (outcome.answer?.status !== 200 || ms > healthBudgetMs) {
      report.health.failures.push(
        `after ${report.requests} requests: ${outcome.answer ? `${outcome.answer.status} in ${ms} ms` : outcome.error}`,
      );
    }
  };
  const started = performance.now();
  const worker = async () => {
    for (let next = cases.next(); !next.done && !stalled; next = cases.next()) {
      const sent = ++report.requests;
      inFlight.add(next.value);
      if (sent % healthEvery === 0) healthChecks.push(checkHealth());
      options.onProgress?.(sent);
      const outcome = await sendFuzzRequest(baseUrl, next.value, requestTimeoutMs);
      inFlight.delete(next.value);
      const status = outcome.answer ? String(outcome.answer.status) : "no answer";
      count(report.statuses, status);
      report.byKind[next.value.kind] ??= {};
      count(report.byKind[next.value.kind]!, status);
      if (outcome.answer) noteSlow(report.slowest, outcome.answer.ms, next.value);
      const violation = contractViolation(next.value, outcome);
      if (violation) report.violations.push(violation);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency ?? 6 }, worker));
  await Promise.all(healthChecks);
  await checkHealth(); // still healthy at the end
  report.elapsedMs = Math.round(performance.now() - started);
  return report;
}

function noteSlow(slowest: FuzzReport["slowest"], ms: number, fuzz: FuzzRequest): void {
  if (slowest.length === 5 && ms <= slowest[4]!.ms) return;
  slowest.push({ ms, request: describe(fuzz) });
  slowest.sort((a, b) => b.ms - a.ms);
  slowest.length = Math.min(slowest.length, 5);
}

function describe(fuzz: FuzzRequest): string {
  return `${fuzz.kind}: ${fuzz.method} ${fuzz.path.slice(0, 80)}`;
}

function count(tally: Record<string, number>, key: string): void {
  tally[key] = (tally[key] ?? 0) + 1;
}
