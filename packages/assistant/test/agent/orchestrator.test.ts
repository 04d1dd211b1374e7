import { writeFileSync } from "node:fs";
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api as apiCall, type TestDaemon, tempDataDir } from "../helpers/daemon.ts";
import { type ScriptedServer, startOpenAiServer } from "../llm/servers/openaiServer.ts";
import { startScriptedDaemon } from "./helpers.ts";

// Sub-agent orchestration end to end: a real daemon whose orchestrator, code_generation and conversation routes
// point (through a counting proxy) at the scripted OpenAI server, each with its own model name so requests can
// be told apart by body.model. The proxy records when each chat request starts and ends, which measures how many
// sub-agents run at once.

const ORCH = "orch-model";
const CODE = "code-model";
const CHAT = "chat-model";

interface Span {
  model: string;
  start: number;
  end: number;
  body: { model?: string; messages?: Array<{ role: string; content: unknown }> };
}

let server: ScriptedServer;
let proxy: Server;
let proxyUrl: string;
const spans: Span[] = [];
let daemon: TestDaemon; // ASSISTANT_MAX_PARALLEL_SUBTASKS=2
let capped: TestDaemon; // ASSISTANT_MAX_CONCURRENT_DELEGATIONS=2, ASSISTANT_MAX_PARALLEL_SUBTASKS unset

const ROUTER = (url: string) => `providers:
  lowbit_server:
    base_url: ${url}/v1
task_types:
  orchestrator:
    primary: {provider: lowbit_server, model: ${ORCH}}
  code_generation:
    primary: {provider: lowbit_server, model: ${CODE}}
  conversation:
    primary: {provider: lowbit_server, model: ${CHAT}}
`;

/** Forwards every request to the scripted server and records the span of each chat request. */
function startProxy(target: string): Promise<Server> {
  const proxyServer = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      let parsed: Span["body"] = {};
      try {
        parsed = JSON.parse(body.toString("utf8")) as Span["body"];
      } catch {
        // not JSON (GET requests)
      }
      const span: Span = { model: parsed.model ?? "", start: Date.now(), end: Number.POSITIVE_INFINITY, body: parsed };
      if (req.url?.includes("/chat/completions")) spans.push(span);
      const upstream = httpRequest(`${target}${req.url}`, { method: req.method, headers: req.headers }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      upstream.on("error", () => res.destroy());
      res.on("close", () => {
        span.end = Date.now();
        upstream.destroy();
      });
      upstream.end(body);
    });
  });
  return new Promise((resolve) => proxyServer.listen(0, "127.0.0.1", () => resolve(proxyServer)));
}

/** The largest number of the spans that were open at the same moment. */
function maxOverlap(list: Span[]): number {
  const points = list.flatMap((s) => [
    { t: s.start, d: 1 },
    { t: s.end, d: -1 },
  ]);
  points.sort((a, b) => a.t - b.t || a.d - b.d); // an end before a start at the same instant
  let open = 0;
  let max = 0;
  for (const p of points) {
    open += p.d;
    max = Math.max(max, open);
  }
  return max;
}

async function boot(env: NodeJS.ProcessEnv): Promise<TestDaemon> {
  const dataDir = tempDataDir();
  writeFileSync(join(dataDir, "llm_router.yaml"), ROUTER(proxyUrl));
  writeFileSync(join(dataDir, "agent_profile.json"), JSON.stringify({ name: "Nova" }));
  return startScriptedDaemon(dataDir, env);
}

beforeAll(async () => {
  server = await startOpenAiServer();
  proxy = await startProxy(server.url);
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  [daemon, capped] = await Promise.all([
    boot({ ASSISTANT_MAX_PARALLEL_SUBTASKS: "2" }),
    boot({ ASSISTANT_MAX_CONCURRENT_DELEGATIONS: "2" }),
  ]);
}, 60_000);
afterAll(async () => {
  await Promise.all([daemon?.stop(), capped?.stop()]);
  await new Promise<void>((resolve) => {
    proxy?.closeAllConnections();
    proxy?.close(() => resolve());
  });
  await server?.close();
});

const plan = (subtasks: Array<{ agent: string; task: string }>) => JSON.stringify({ subtasks });
const slow = (text: string) => ({
  kind: "reply" as const,
  text: text.split(" ").map((w, i) => (i ? ` ${w}` : w)),
  chunkDelayMs: 100,
});

// biome-ignore lint/suspicious/noExplicitAny: tests inspect response bodies loosely
async function childrenOf(d: TestDaemon, parentId: string): Promise<any[]> {
  const list = (await apiCall(d, "GET", "/api/tasks?limit=200")).json();
  // biome-ignore lint/suspicious/noExplicitAny: tests inspect response bodies loosely
  return list.items.filter((t: any) => t.parent_id === parentId);
}

async function until<T>(what: string, probe: () => Promise<T | undefined | false>, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function text(span: Span): string {
  return JSON.stringify(span.body.messages ?? []);
}

describe("orchestrator tasks", () => {
  it("runs a 3-sub-task plan as child tasks, at most 2 at once, and answers with the synthesis", async () => {
    const before = spans.length;
    server.enqueue(
      {
        kind: "reply",
        text: `Here is the plan:\n\`\`\`json\n${plan([
          { agent: "code", task: "Write a function that adds two numbers" },
          { agent: "search", task: "Find the population of Lyon" },
          { agent: "creative_writing", task: "Write a haiku about rivers" },
        ])}\n\`\`\``,
      },
      slow("alpha result from a sub-agent"),
      slow("beta result from a sub-agent"),
      slow("gamma result from a sub-agent"),
      { kind: "reply", text: "The synthesised final answer." },
    );
    const res = await apiCall(daemon, "POST", "/api/tasks", {
      message: "Write an adder, find Lyon's population and write a haiku",
      task_type: "orchestrator",
      wait: true,
    });
    expect(res.status).toBe(200);
    const parent = res.json();
    expect(parent).toMatchObject({ status: "completed", reply: "The synthesised final answer.", rounds: 4 });

    const children = await childrenOf(daemon, parent.id);
    expect(children).toHaveLength(3);
    for (const child of children) {
      expect(child).toMatchObject({ status: "completed", origin: "subagent", parent_id: parent.id });
      expect(child.session_id).not.toBe(parent.session_id);
    }
    expect(new Set(children.map((c) => c.session_id)).size).toBe(3);
    expect(children.map((c) => c.task_type).sort()).toEqual(["code_generation", "conversation", "creative_writing"]);

    const mine = spans.slice(before);
    expect(mine.map((s) => s.model)).toEqual([ORCH, expect.any(String), expect.any(String), expect.any(String), ORCH]);
    const subagents = mine.filter((s) => s.model !== ORCH);
    expect(subagents.map((s) => s.model).sort()).toEqual([CHAT, CHAT, CODE]);
    expect(text(subagents.find((s) => s.model === CODE)!)).toContain("Write a function that adds two numbers");
    // Parallel, but never more than ASSISTANT_MAX_PARALLEL_SUBTASKS=2 at once.
    expect(maxOverlap(subagents)).toBe(2);
    // The synthesis request saw every sub-result.
    const synthesis = text(mine.at(-1)!);
    for (const word of ["alpha", "beta", "gamma"]) expect(synthesis).toContain(`${word} result from a sub-agent`);

    const report = (await apiCall(daemon, "GET", `/api/tasks/${parent.id}/report`)).json();
    expect(report.subtasks).toHaveLength(3);
    expect(report.subtasks.map((s: { task_type: string }) => s.task_type).sort()).toEqual([
      "code_generation",
      "conversation",
      "creative_writing",
    ]);
    for (const child of children) {
      expect(report.subtasks).toContainEqual({ task_id: child.id, task_type: child.task_type, status: "completed" });
      expect(report.done).toContainEqual(
        expect.objectContaining({ text: expect.stringContaining(`[sub-task ${child.id.slice(0, 8)}] Answered:`) }),
      );
    }
    expect(report.done).toContainEqual(expect.objectContaining({ text: "Answered: The synthesised final answer." }));
  });

  it("falls back to the plain agent loop when the plan is not usable", async () => {
    const plans = [
      "I would rather just answer.", // not JSON
      plan([]), // no sub-task
      plan([{ agent: "wizard", task: "Do magic" }]), // unknown agent
      JSON.stringify({ subtasks: [{ agent: "code", task: "x", priority: 1 }] }), // unknown key
    ];
    for (const [i, answer] of plans.entries()) {
      const before = spans.length;
      server.enqueue({ kind: "reply", text: answer }, { kind: "reply", text: `Plain answer ${i}` });
      const res = await apiCall(daemon, "POST", "/api/tasks", {
        message: "Say hello",
        task_type: "orchestrator",
        wait: true,
      });
      const task = res.json();
      expect(task).toMatchObject({ status: "completed", reply: `Plain answer ${i}` });
      expect(await childrenOf(daemon, task.id)).toEqual([]);
      // The plan request, then the plain loop on the orchestrator route.
      expect(spans.slice(before).map((s) => s.model)).toEqual([ORCH, ORCH]);
      // The plain loop sends the request once, as the last message.
      const body = server.requests.at(-1)!.body as { messages: Array<{ role: string; content: unknown }> };
      const asked = body.messages.filter((m) => m.role === "user" && JSON.stringify(m.content).includes("Say hello"));
      expect(asked).toHaveLength(1);
      const report = (await apiCall(daemon, "GET", `/api/tasks/${task.id}/report`)).json();
      expect(report.subtasks).toEqual([]);
    }
  });

  it("cancelling the parent cancels the running sub-tasks and starts no more", async () => {
    server.enqueue(
      {
        kind: "reply",
        text: plan([
          { agent: "code", task: "Refactor module one" },
          { agent: "code", task: "Refactor module two" },
          { agent: "search", task: "Look up module three" },
        ]),
      },
      { kind: "hang" },
      { kind: "hang" },
    );
    const created = await apiCall(daemon, "POST", "/api/tasks", {
      message: "Refactor everything",
      task_type: "orchestrator",
    });
    expect(created.status).toBe(202);
    const parentId = created.json().task_id;
    await until("two running sub-tasks", async () => {
      const children = await childrenOf(daemon, parentId);
      return children.length === 2 && children.every((c) => c.status === "running");
    });
    const cancel = await apiCall(daemon, "POST", `/api/tasks/${parentId}/cancel`);
    expect(cancel.status).toBe(200);
    const parent = await until("the parent to end", async () => {
      const task = (await apiCall(daemon, "GET", `/api/tasks/${parentId}`)).json();
      return task.status === "running" ? undefined : task;
    });
    expect(parent.status).toBe("cancelled");
    const children = await childrenOf(daemon, parentId);
    expect(children).toHaveLength(2); // the third was never started
    expect(children.map((c) => c.status)).toEqual(["cancelled", "cancelled"]);
    expect(children[0].reason).toBe("the parent task was cancelled");
    const report = (await apiCall(daemon, "GET", `/api/tasks/${parentId}/report`)).json();
    expect(report.status).toBe("cancelled");
    expect(report.subtasks.map((s: { status: string }) => s.status)).toEqual(["cancelled", "cancelled"]);
  });

  it("ASSISTANT_MAX_CONCURRENT_DELEGATIONS=2 runs only the first 2 of a 4-sub-task plan and says so", async () => {
    const before = spans.length;
    server.enqueue(
      {
        kind: "reply",
        text: plan([
          { agent: "code", task: "Task one" },
          { agent: "code", task: "Task two" },
          { agent: "search", task: "Task three" },
          { agent: "search", task: "Task four" },
        ]),
      },
      { kind: "reply", text: "first sub-result" },
      { kind: "reply", text: "second sub-result" },
      { kind: "reply", text: "Capped synthesis." },
    );
    // Streamed, so the live delegate events are visible too.
    const res = await apiCall(capped, "POST", "/api/message", {
      message: "Do four things",
      task_type: "orchestrator",
      stream: true,
    });
    const events = res.body
      .split("\n\n")
      .filter((b) => b.includes("data:"))
      .map((b) => ({
        event: b.split("\n")[0]!.slice(7).trim(),
        data: JSON.parse(b.slice(b.indexOf("data:") + 5)),
      }));
    const calls = events.filter((e) => e.event === "tool_call");
    expect(calls.map((e) => e.data.arguments.task).sort()).toEqual(["Task one", "Task two"]);
    expect(calls.every((e) => e.data.name === "delegate" && e.data.arguments.agent === "code")).toBe(true);
    const results = events.filter((e) => e.event === "tool_result");
    expect(results).toHaveLength(2);
    expect(results.map((e) => e.data.output).sort()).toEqual([
      "completed: first sub-result",
      "completed: second sub-result",
    ]);
    const parentId = events[0]!.data.task_id;

    const parent = (await apiCall(capped, "GET", `/api/tasks/${parentId}`)).json();
    expect(parent.reply).toMatch(
      /^Capped synthesis\.\n\n\[delegation limit\] The plan had 4 sub-tasks; only the first 2 ran/,
    );
    expect(parent.rounds).toBe(3);
    expect(await childrenOf(capped, parentId)).toHaveLength(2);
    expect(spans.slice(before).map((s) => s.model)).toEqual([ORCH, CODE, CODE, ORCH]);
    const report = (await apiCall(capped, "GET", `/api/tasks/${parentId}/report`)).json();
    expect(report.subtasks).toHaveLength(2);
    expect(report.needs_review).toContainEqual(
      expect.objectContaining({ text: expect.stringContaining("The plan had 4 sub-tasks; only the first 2 ran") }),
    );
  });

  it("joins the sub-results under headings when the synthesis fails", async () => {
    server.enqueue(
      { kind: "reply", text: plan([{ agent: "search", task: "Find the tallest tower" }]) },
      { kind: "reply", text: "The tallest tower is very tall." },
      { kind: "status", status: 400 },
    );
    const task = (
      await apiCall(capped, "POST", "/api/tasks", { message: "Tallest tower?", task_type: "orchestrator", wait: true })
    ).json();
    expect(task.status).toBe("completed");
    expect(task.reply).toBe("## 1. search: Find the tallest tower (completed)\n\nThe tallest tower is very tall.");
  });
});

describe("GET /api/agents", () => {
  it("lists the main agent, the orchestrator, the sub-agents with their routes, and the limits", async () => {
    const res = await apiCall(daemon, "GET", "/api/agents");
    expect(res.status).toBe(200);
    const body = res.json();
    // biome-ignore lint/suspicious/noExplicitAny: tests inspect response bodies loosely
    const byName = new Map<string, any>(body.agents.map((a: { name: string }) => [a.name, a]));
    expect(byName.get("Nova")).toMatchObject({ kind: "main" });
    expect(byName.get("orchestrator")).toMatchObject({ kind: "orchestrator", route: "orchestrator", model: ORCH });
    expect(byName.get("code")).toMatchObject({
      kind: "alias",
      task_type: "code_generation",
      route: "code_generation",
      provider: "lowbit_server",
      model: CODE,
    });
    expect(byName.get("search")).toMatchObject({ kind: "alias", task_type: "conversation", model: CHAT });
    // Specialists resolve through their related types.
    expect(byName.get("frontend")).toMatchObject({ kind: "task_type", route: "code_generation", model: CODE });
    expect(byName.get("creative")).toMatchObject({ kind: "task_type", route: "conversation", model: CHAT });
    expect(byName.get("code_generation")).toMatchObject({ kind: "task_type", model: CODE });
    expect(body.limits).toEqual({ max_concurrent_delegations: 15, max_parallel_subtasks: 2 });

    // Unset, the default applies (a bad value stops the daemon: test/daemon/envSettings.test.ts).
    const other = (await apiCall(capped, "GET", "/api/agents")).json();
    expect(other.limits).toEqual({ max_concurrent_delegations: 2, max_parallel_subtasks: 4 });
  });
});
