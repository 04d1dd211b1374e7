import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RouteProvider } from "../../../src/config/schemas/llmRouter.ts";
import { closedPort } from "../providers/helpers.ts";
import { type ScriptedServer, startOpenAiServer } from "../servers/openaiServer.ts";
import { collect, failureOf, routesOf, testRouter, textOf } from "./helpers.ts";

// The router engine against real OpenAI-protocol servers: retries, Retry-After, fallback, timeouts, cut streams,
// constraints, degraded mode, budget and metrics.

let a: ScriptedServer;
let b: ScriptedServer;
beforeEach(async () => {
  a = await startOpenAiServer();
  b = await startOpenAiServer();
});
afterEach(async () => {
  await a.close();
  await b.close();
});

/** conversation: lowbit_server (server a) first, then cloud_a (server b). */
interface Target {
  provider: RouteProvider;
  model: string;
  config?: Record<string, unknown>;
}

function twoServers(global: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  const primary: Target = { provider: "lowbit_server", model: "local-a" };
  const fallback: Target[] = [{ provider: "cloud_a", model: "gpt-4o-mini" }];
  return {
    global: { default_max_retries: 2, ...global },
    providers: {
      lowbit_server: { base_url: `${a.url}/v1` },
      cloud_a: { base_url: `${b.url}/v1`, api_key_ref: "vault://cloud_a_api_key" },
    },
    task_types: {
      conversation: { primary, fallback, ...extra },
    },
  };
}
const secrets = { cloud_a_api_key: "sk-test-router-key" };

describe("router: the primary answers", () => {
  it("streams the text and a finish with usage, and records one call", async () => {
    a.enqueue({ kind: "reply", text: ["Hello", " world"], usage: { input: 11, output: 2 } });
    const { router, metrics } = testRouter(twoServers(), { secrets });
    const events = await collect(router);
    expect(routesOf(events)).toEqual(["lowbit_server/local-a"]);
    expect(textOf(events)).toBe("Hello world");
    const finish = events.at(-1)!;
    expect(finish).toMatchObject({ type: "finish", provider: "lowbit_server", model: "local-a", costUsd: 0 });
    expect(finish.type === "finish" && finish.usage).toEqual({ input: 11, output: 2 });
    const m = metrics.snapshot().models[0]!;
    expect(m).toMatchObject({
      provider: "lowbit_server",
      model: "local-a",
      calls: 1,
      failures: 0,
      tokens_in: 11,
      tokens_out: 2,
    });
    expect(m.latency_ms.p50).not.toBeNull();
    expect(m.first_chunk_ms.p50).not.toBeNull();
  });

  it("merges the route config into the request and caps max_tokens by ASSISTANT_MAX_RESPONSE_TOKENS", async () => {
    const file = twoServers();
    file.task_types.conversation.primary.config = { temperature: 0.2, top_p: 0.5 };
    const { router } = testRouter(file, { secrets, env: { ASSISTANT_MAX_RESPONSE_TOKENS: "77" } });
    await collect(router);
    const body = a.requests.at(-1)!.body as Record<string, unknown>;
    expect(body.temperature).toBe(0.2);
    expect(body.top_p).toBe(0.5);
    expect(body.max_tokens ?? body.max_completion_tokens).toBe(77);
    expect(body.stream).toBe(true);
  });

  it("passes tool calls through", async () => {
    a.enqueue({ kind: "tool_call", name: "read_file", arguments: { path: "/tmp/x" } });
    const { router } = testRouter(twoServers(), { secrets });
    const events = await collect(router, {
      tools: [
        {
          type: "function",
          name: "read_file",
          inputSchema: { type: "object", properties: { path: { type: "string" } } },
        },
      ],
    });
    const call = events.find((e) => e.type === "tool_call");
    expect(call).toMatchObject({ type: "tool_call", name: "read_file" });
    expect(call?.type === "tool_call" && JSON.parse(call.input)).toEqual({ path: "/tmp/x" });
    expect(events.at(-1)).toMatchObject({ type: "finish", finishReason: "tool-calls" });
  });
});

describe("router: retries", () => {
  it("retries a 500 and then answers", async () => {
    a.enqueue({ kind: "status", status: 500 });
    const { router, metrics } = testRouter(twoServers(), { secrets });
    const events = await collect(router);
    expect(routesOf(events)).toEqual(["lowbit_server/local-a", "lowbit_server/local-a"]);
    expect(textOf(events)).toBe("Hello from the test server");
    expect(metrics.snapshot().models[0]).toMatchObject({ calls: 2, failures: 1, retries: 1, fallbacks: 0 });
  });

  it("waits as long as Retry-After says after a 429", async () => {
    a.enqueue({ kind: "status", status: 429, headers: { "retry-after": "1" } });
    const { router } = testRouter(twoServers(), { secrets });
    const started = performance.now();
    const events = await collect(router);
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
    expect(textOf(events)).toBe("Hello from the test server");
    expect(a.requests.filter((r) => r.method === "POST")).toHaveLength(2);
  });

  it("retries default_max_retries times, then falls back to the next route", async () => {
    a.setDefault({ kind: "status", status: 503 });
    b.enqueue({ kind: "reply", text: "from the fallback" });
    const { router, metrics } = testRouter(twoServers(), { secrets });
    const events = await collect(router);
    expect(routesOf(events)).toEqual([
      "lowbit_server/local-a",
      "lowbit_server/local-a",
      "lowbit_server/local-a",
      "cloud_a/gpt-4o-mini",
    ]);
    expect(textOf(events)).toBe("from the fallback");
    expect(b.requests.at(-1)!.headers.authorization).toBe("Bearer sk-test-router-key");
    const byModel = Object.fromEntries(metrics.snapshot().models.map((m) => [m.model, m]));
    expect(byModel["local-a"]).toMatchObject({ calls: 3, failures: 3, retries: 2 });
    expect(byModel["gpt-4o-mini"]).toMatchObject({ calls: 1, failures: 0, fallbacks: 1 });
  });

  it("does not retry a refused request (400) but still falls back", async () => {
    a.enqueue({ kind: "status", status: 400 });
    const { router } = testRouter(twoServers(), { secrets });
    const events = await collect(router);
    expect(routesOf(events)).toEqual(["lowbit_server/local-a", "cloud_a/gpt-4o-mini"]);
  });

  it("with enable_fallback false, fails naming the route and why, after the retries", async () => {
    a.setDefault({ kind: "status", status: 500 });
    const { router } = testRouter(twoServers({ enable_fallback: false, default_max_retries: 1 }), { secrets });
    const error = await failureOf(collect(router));
    expect(error.code).toBe("provider_error");
    expect(error.status).toBe(502);
    expect(error.message).toContain('no route answered task type "conversation"');
    expect(error.message).toContain("lowbit_server/local-a: HTTP 500");
    expect(error.message).toContain("after 1 retry");
    expect(b.requests).toHaveLength(0);
  });
});

describe("router: timeouts and broken streams", () => {
  it("gives up on a hung server after ASSISTANT_LLM_FIRST_CHUNK_SECS and falls back", async () => {
    a.setDefault({ kind: "hang" });
    const { router } = testRouter(twoServers({ default_max_retries: 0 }), {
      secrets,
      env: { ASSISTANT_LLM_FIRST_CHUNK_SECS: "0.3" },
    });
    const started = performance.now();
    const events = await collect(router);
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(280);
    expect(elapsed).toBeLessThan(3000);
    expect(routesOf(events)).toEqual(["lowbit_server/local-a", "cloud_a/gpt-4o-mini"]);
    expect(textOf(events)).toBe("Hello from the test server");
  });

  it("reports a timeout as provider_timeout naming the limit", async () => {
    a.setDefault({ kind: "hang" });
    const { router } = testRouter(twoServers({ enable_fallback: false, default_max_retries: 0 }), {
      env: { ASSISTANT_LLM_FIRST_CHUNK_SECS: "0.2" },
    });
    const error = await failureOf(collect(router));
    expect(error.code).toBe("provider_timeout");
    expect(error.status).toBe(504);
    expect(error.message).toContain("ASSISTANT_LLM_FIRST_CHUNK_SECS");
  });

  it("a stream that stalls longer than ASSISTANT_LLM_STREAM_IDLE_SECS is reset and retried", async () => {
    a.enqueue({ kind: "stall", afterChunks: 2 });
    const { router } = testRouter(twoServers(), { secrets, env: { ASSISTANT_LLM_STREAM_IDLE_SECS: "0.3" } });
    const events = await collect(router);
    const reset = events.find((e) => e.type === "reset");
    expect(reset?.type === "reset" && reset.reason).toContain("ASSISTANT_LLM_STREAM_IDLE_SECS");
    expect(textOf(events)).toBe("Hello from the test server");
    expect(routesOf(events)).toEqual(["lowbit_server/local-a", "lowbit_server/local-a"]);
  });

  it("a cut stream is reset and retried; the caller sees only the complete answer", async () => {
    a.enqueue({ kind: "cut", afterChunks: 3 });
    const { router } = testRouter(twoServers(), { secrets });
    const events = await collect(router);
    expect(events.some((e) => e.type === "reset")).toBe(true);
    expect(textOf(events)).toBe("Hello from the test server");
  });

  it("ASSISTANT_LLM_TIMEOUT_SECS bounds a slow stream that keeps sending", async () => {
    a.setDefault({ kind: "reply", text: "a b c d e f g h i j", chunkDelayMs: 150 });
    const { router } = testRouter(twoServers({ enable_fallback: false, default_max_retries: 0 }), {
      env: { ASSISTANT_LLM_TIMEOUT_SECS: "0.5" },
    });
    const error = await failureOf(collect(router));
    expect(error.code).toBe("provider_timeout");
    expect(error.message).toContain("ASSISTANT_LLM_TIMEOUT_SECS");
  });

  it("a caller's abort stops the call without trying other routes", async () => {
    a.setDefault({ kind: "hang" });
    const { router } = testRouter(twoServers(), { secrets });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("user stopped")), 200);
    await expect(collect(router, { signal: controller.signal })).rejects.toThrow("user stopped");
    expect(b.requests).toHaveLength(0);
  });
});

describe("router: route selection", () => {
  it("an unreachable provider is skipped at once, not retried", async () => {
    const file = twoServers();
    file.providers.lowbit_server.base_url = `http://127.0.0.1:${await closedPort()}/v1`;
    const { router } = testRouter(file, { secrets });
    const events = await collect(router);
    expect(routesOf(events)).toEqual(["lowbit_server/local-a", "cloud_a/gpt-4o-mini"]);
  });

  it("a failed target yields a fallback event naming it and why, and the core names it too", async () => {
    const port = await closedPort();
    const file = twoServers({ default_max_retries: 0 });
    // A key in the URL query and the cloud target's key must never reach a reason or the core's text.
    file.providers.lowbit_server.base_url = `http://127.0.0.1:${port}/v1?key=query-secret`;
    b.setDefault({ kind: "status", status: 401 });
    const { router } = testRouter(file, { secrets });
    const events = await collect(router);
    const fallbacks = events.filter((e) => e.type === "fallback");
    expect(fallbacks).toEqual([
      {
        type: "fallback",
        provider: "lowbit_server",
        model: "local-a",
        reason: `cannot connect to 127.0.0.1:${port} (ECONNREFUSED: nothing listens there)`,
      },
      { type: "fallback", provider: "cloud_a", model: "gpt-4o-mini", reason: expect.stringMatching(/^HTTP 401/) },
    ]);
    // Each fallback comes after its target's route event and before the next target's.
    const order = events.flatMap((e) =>
      e.type === "route" || e.type === "fallback" ? [`${e.type}:${e.provider}`] : [],
    );
    expect(order).toEqual([
      "route:lowbit_server",
      "fallback:lowbit_server",
      "route:cloud_a",
      "fallback:cloud_a",
      "route:assistant_core",
    ]);
    const text = textOf(events);
    expect(text).toContain(`lowbit_server/local-a failed: cannot connect to 127.0.0.1:${port} (ECONNREFUSED`);
    expect(text).toContain("start that server or run `assistant discover`");
    expect(text).toContain("cloud_a/gpt-4o-mini failed: HTTP 401");
    const everything = JSON.stringify(events);
    for (const secret of ["query-secret", secrets.cloud_a_api_key]) expect(everything).not.toContain(secret);
  });

  it("a missing API key moves on to the next route and says how to add it", async () => {
    const file = twoServers();
    file.task_types.conversation.primary = { provider: "cloud_a", model: "gpt-4o-mini" };
    file.task_types.conversation.fallback = [{ provider: "lowbit_server", model: "local-a" }];
    const { router } = testRouter({ ...file, global: { enable_fallback: true } }); // no secrets
    const events = await collect(router);
    expect(textOf(events)).toBe("Hello from the test server");
    expect(routesOf(events).at(-1)).toBe("lowbit_server/local-a");
  });

  it("every route failing ends at assistant_core, which says plainly that no model is available", async () => {
    a.setDefault({ kind: "status", status: 500 });
    b.setDefault({ kind: "status", status: 500 });
    const { router } = testRouter(twoServers({ default_max_retries: 0 }), { secrets });
    const events = await collect(router);
    expect(routesOf(events)).toEqual(["lowbit_server/local-a", "cloud_a/gpt-4o-mini", "assistant_core/core"]);
    expect(events.at(-1)).toMatchObject({ type: "finish", provider: "assistant_core" });
    expect(textOf(events).toLowerCase()).toContain("no language model");
  });

  it("ASSISTANT_DEGRADED_MODE=1 keeps only local providers", async () => {
    const file = twoServers();
    file.task_types.conversation.primary = { provider: "cloud_a", model: "gpt-4o-mini" };
    file.task_types.conversation.fallback = [{ provider: "lowbit_server", model: "local-a" }];
    const { router } = testRouter(file, { secrets, env: { ASSISTANT_DEGRADED_MODE: "1" } });
    const events = await collect(router);
    expect(routesOf(events)).toEqual(["lowbit_server/local-a"]);
    expect(b.requests).toHaveLength(0);
  });

  it("skips a route whose estimated cost exceeds max_cost_per_request", async () => {
    const file = twoServers({}, { constraints: { max_cost_per_request: 0.001 } });
    file.task_types.conversation.primary = { provider: "cloud_a", model: "gpt-4o" }; // $10 per M output tokens
    file.task_types.conversation.fallback = [{ provider: "lowbit_server", model: "local-a" }];
    const { router } = testRouter(file, { secrets });
    const events = await collect(router, { maxOutputTokens: 1000 });
    expect(routesOf(events)).toEqual(["lowbit_server/local-a"]);
    expect(b.requests).toHaveLength(0);
  });

  it("max_latency_secs bounds the route's calls", async () => {
    a.setDefault({ kind: "hang" });
    const file = twoServers({ default_max_retries: 0 }, { constraints: { max_latency_secs: 0.3 } });
    const { router } = testRouter(file, { secrets });
    const started = performance.now();
    const events = await collect(router);
    expect(performance.now() - started).toBeLessThan(3000);
    expect(routesOf(events)).toEqual(["lowbit_server/local-a", "cloud_a/gpt-4o-mini"]);
  });

  it("a specialist without an entry uses its related type's route", async () => {
    const file = {
      providers: { lowbit_server: { base_url: `${a.url}/v1` } },
      task_types: { data_analysis: { primary: { provider: "lowbit_server" as const, model: "analyst-model" } } },
    };
    const { router } = testRouter(file);
    const events = await collect(router, { taskType: "financial" });
    expect(routesOf(events)[0]).toBe("lowbit_server/analyst-model");
    expect(router.resolve("financial").source).toBe("data_analysis");
  });
});

describe("router: budget", () => {
  it("stops a session whose token budget is spent, with a message that says what to do", async () => {
    a.setDefault({ kind: "reply", text: "ok", usage: { input: 40, output: 20 } });
    const { router, budget } = testRouter(twoServers(), { secrets, env: { ASSISTANT_MAX_TOKENS_PER_SESSION: "100" } });
    await collect(router, { sessionId: "s1" });
    expect(budget.usage("s1")).toMatchObject({ tokens_in: 40, tokens_out: 20 });
    await collect(router, { sessionId: "s1" }); // 60 < 100: allowed, now 120
    const error = await failureOf(collect(router, { sessionId: "s1" }));
    expect(error.code).toBe("budget_exceeded");
    expect(error.status).toBe(429);
    expect(error.message).toContain("ASSISTANT_MAX_TOKENS_PER_SESSION");
    expect(error.message).toContain("/api/budget/reset-session");
    await collect(router, { sessionId: "s2" }); // another session is not affected
    expect(budget.resetSession("s1")).toBe(1);
    await collect(router, { sessionId: "s1" });
  });

  it("counts estimated cost and stops at ASSISTANT_MAX_COST_PER_SESSION_USD", async () => {
    const file = twoServers();
    file.task_types.conversation.primary = { provider: "cloud_a", model: "gpt-4o" };
    b.setDefault({ kind: "reply", text: "ok", usage: { input: 1000, output: 1000 } }); // $0.0125
    const { router, budget } = testRouter(file, { secrets, env: { ASSISTANT_MAX_COST_PER_SESSION_USD: "0.02" } });
    const events = await collect(router, { sessionId: "s" });
    expect(events.at(-1)).toMatchObject({ type: "finish", costUsd: 0.0125 });
    await collect(router, { sessionId: "s" });
    expect(budget.usage("s").cost_usd).toBeCloseTo(0.025, 6);
    expect((await failureOf(collect(router, { sessionId: "s" }))).code).toBe("budget_exceeded");
  });

  it("limits set through the API win over the environment and survive as settings", async () => {
    const { budget } = testRouter(twoServers(), { env: { ASSISTANT_MAX_TOKENS_PER_SESSION: "100" } });
    expect(budget.status().sources.max_tokens_per_session).toBe("env");
    const status = budget.setLimits({ max_tokens_per_session: 5000, max_cost_per_session_usd: 1.5 });
    expect(status.limits).toEqual({ max_tokens_per_session: 5000, max_cost_per_session_usd: 1.5 });
    expect(status.sources).toEqual({ max_tokens_per_session: "api", max_cost_per_session_usd: "api" });
    expect(budget.setLimits({ max_tokens_per_session: null }).limits.max_tokens_per_session).toBe(100);
  });
});

describe("router: metrics", () => {
  it("renders Prometheus text with escaped labels", async () => {
    a.enqueue({ kind: "reply", text: "hi", usage: { input: 3, output: 1 } });
    const file = twoServers();
    file.task_types.conversation.primary.model = 'we"ird\\model';
    const { router, metrics } = testRouter(file, { secrets });
    await collect(router);
    const text = metrics.prometheus();
    expect(text).toContain("# TYPE assistant_llm_calls_total counter");
    expect(text).toContain('assistant_llm_calls_total{provider="lowbit_server",model="we\\"ird\\\\model"} 1');
    expect(text).toContain('assistant_llm_tokens_in_total{provider="lowbit_server",model="we\\"ird\\\\model"} 3');
    expect(text.endsWith("\n")).toBe(true);
  });

  it("collects nothing when enable_metrics is false", async () => {
    const { router, metrics } = testRouter(twoServers({ enable_metrics: false }), { secrets });
    await collect(router);
    expect(metrics.snapshot()).toMatchObject({ enabled: false, models: [] });
  });
});
