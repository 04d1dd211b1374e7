import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import type { z } from "zod";
import { CHAT_CATEGORIES } from "../../src/llm/classify.ts";
import { eventMessageSchema } from "../../src/server/eventSchemas.ts";
import { taskStreamMessageSchema } from "../../src/server/taskStream.ts";
import { scriptedRouterYaml, startScriptedDaemon } from "../agent/helpers.ts";
import { api, type RawResponse, raw, type TestDaemon, tempDataDir } from "../helpers/daemon.ts";
import { type ScriptedServer, startOpenAiServer } from "../llm/servers/openaiServer.ts";

// The API contract (docs/http-api.md, "OpenAPI document") against the real daemon: /api/openapi.json documents
// every operation completely (a stable operationId, a response schema, every error status with the error body),
// and every operation, called once here in a plausible way, answers a status it documents with a body its schema
// accepts. The test daemon checks every answer against the route's declaration (ASSISTANT_VALIDATE_RESPONSES): a
// body that does not match becomes a 500 naming the problem, so a 500 here is a contract break. The streams are
// parsed frame by frame and checked against their message schemas. The model is a scripted local server.

// biome-ignore lint/suspicious/noExplicitAny: the test walks the OpenAPI document loosely
type Json = Record<string, any>;

let llm: ScriptedServer;
let daemon: TestDaemon;
let doc: Json;
let work: string;

beforeAll(async () => {
  llm = await startOpenAiServer();
  llm.setDefault({ kind: "reply", text: "Done: the answer." });
  const dataDir = tempDataDir();
  work = tempDataDir("assistant-contract-work-"); // outside the data dir, which no tool may write
  writeFileSync(join(work, "notes.txt"), "contract notes\n");
  const routes = Object.fromEntries(CHAT_CATEGORIES.map((category) => [category, "contract-model"]));
  writeFileSync(join(dataDir, "llm_router.yaml"), scriptedRouterYaml(llm.url, routes));
  writeFileSync(
    join(dataDir, "tools_policy.yaml"),
    stringify({ allowed_read_paths: [work], allowed_write_paths: [work], require_approval: ["write_file"] }),
  );
  mkdirSync(join(dataDir, "skills", "tea-notes"), { recursive: true });
  writeFileSync(
    join(dataDir, "skills", "tea-notes", "SKILL.md"),
    "---\nname: tea-notes\ndescription: Notes about tea\n---\nWrite the notes down.\n",
  );
  daemon = await startScriptedDaemon(dataDir);
  doc = (await api(daemon, "GET", "/api/openapi.json")).json();
});

afterAll(async () => {
  expect(await daemon.stop()).toBe(0);
  await llm.close();
});

function operations(): Array<{ method: string; path: string; op: Json }> {
  return Object.entries(doc.paths as Json).flatMap(([path, methods]) =>
    Object.entries(methods as Json).map(([method, op]) => ({ method: method.toUpperCase(), path, op: op as Json })),
  );
}

function refsIn(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) refsIn(item, found);
  else if (value && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      if (key === "$ref" && typeof item === "string") found.push(item);
      else refsIn(item, found);
    }
  }
  return found;
}

describe("the OpenAPI document", () => {
  it("documents every operation: a stable operationId, its answers and every error status with the error body", () => {
    const ops = operations();
    expect(ops.length).toBeGreaterThanOrEqual(85);
    const ids = ops.map(({ op }) => op.operationId);
    expect(new Set(ids).size, "operationIds are unique").toBe(ids.length);
    const problems: string[] = [];
    for (const { method, path, op } of ops) {
      const where = `${method} ${path} (${op.operationId})`;
      if (!/^[a-z][A-Za-z]+$/.test(op.operationId ?? "")) problems.push(`${where}: operationId`);
      const responses = op.responses as Json;
      const successes = Object.keys(responses).filter((status) => /^[23]\d\d$/.test(status));
      if (successes.length === 0) problems.push(`${where}: no success answer`);
      for (const status of successes) {
        const content = responses[status].content as Json | undefined;
        if (status === "303") continue; // a redirect has no body
        for (const [type, media] of Object.entries(content ?? {})) {
          const described = media.schema && Object.keys(media.schema).length > 0;
          if (!described && !type.startsWith("text/")) problems.push(`${where}: ${status} ${type} has no schema`);
        }
        if (!content) problems.push(`${where}: ${status} has no content`);
      }
      const needed = ["400", "403", "413", "500", ...(op.security.length > 0 ? ["401"] : [])];
      if (method !== "GET") needed.push("415");
      for (const status of needed) if (!responses[status]) problems.push(`${where}: no ${status} answer`);
      for (const [status, answer] of Object.entries(responses)) {
        if (Number(status) < 400 || (path === "/login" && status === "401")) continue;
        if (answer.content?.["application/json"]?.schema?.$ref !== "#/components/schemas/Error") {
          problems.push(`${where}: ${status} is not the error body`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it("names the records as components, references only existing ones, and documents pages and streams", () => {
    const schemas = doc.components.schemas as Json;
    for (const name of ["Task", "TaskPage", "Memory", "Schedule", "QueueItem", "Decision", "Error", "StoredEvent"]) {
      expect(schemas[name], name).toBeDefined();
    }
    const dangling = refsIn(doc).filter((ref) => !schemas[ref.replace("#/components/schemas/", "")]);
    expect(dangling).toEqual([]);
    expect(schemas.TaskPage.properties.items.items).toEqual({ $ref: "#/components/schemas/Task" });
    expect(schemas.TaskPage.required).toEqual(["items", "next_cursor"]);
    expect(schemas.Error.properties.error.properties.code.enum).toContain("not_found");
    // One component per event kind, told apart by `kind`.
    expect(schemas.StoredEvent.oneOf.length).toBeGreaterThan(30);
    expect(schemas.TaskCreatedEvent.properties.kind.const).toBe("task_created");
    const events = doc.paths["/api/events"].get.responses["200"].content["text/event-stream"].schema;
    expect(events).toEqual({ $ref: "#/components/schemas/EventMessage" });
    const chat = doc.paths["/api/message"].post.responses;
    expect(chat["200"].content["text/event-stream"].schema).toEqual({ $ref: "#/components/schemas/TaskStreamMessage" });
    expect(chat["202"].content["application/json"].schema).toBeDefined();
    expect(doc.paths["/api/tasks"].get.operationId).toBe("listTasks");
    expect(doc.paths["/api/permissions/queue/{id}/approve"].post.operationId).toBe("approveQueueItem");
  });
});

// ---- every operation, called ---------------------------------------------------------------------------------

interface Ids {
  loginCode: string;
  taskId: string;
  sessionId: string;
  memoryId: string;
  scheduleId: string;
  decisionId: string;
  queueItems: string[];
}

interface Frame {
  id?: string;
  event?: string;
  data: string;
}

/** Reads server-sent frames until `enough` says stop, the stream ends, or 10 s pass. */
async function readFrames(path: string, init: RequestInit, enough: (frames: Frame[]) => boolean): Promise<Frame[]> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 10_000);
  const response = await fetch(`${daemon.url}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${daemon.token}`, "content-type": "application/json" },
    signal: controller.signal,
  });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
  const frames: Frame[] = [];
  let buffer = "";
  const decoder = new TextDecoder();
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let end = buffer.indexOf("\n\n");
      while (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const frame: Frame = { data: "" };
        for (const line of block.split("\n")) {
          if (line.startsWith("id: ")) frame.id = line.slice(4);
          else if (line.startsWith("event: ")) frame.event = line.slice(7);
          else if (line.startsWith("data: ")) frame.data += line.slice(6);
        }
        if (frame.data) frames.push(frame);
        end = buffer.indexOf("\n\n");
      }
      if (enough(frames)) break;
    }
  } catch (error) {
    if (!controller.signal.aborted) throw error;
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  return frames;
}

function checkFrames(frames: Frame[], schema: z.ZodType, shape: (frame: Frame) => unknown): void {
  expect(frames.length).toBeGreaterThan(0);
  for (const frame of frames) {
    const result = schema.safeParse(shape(frame));
    expect(result.success, `${frame.event ?? "data"}: ${frame.data.slice(0, 300)}`).toBe(true);
  }
}

type Step = (ids: Ids) => Promise<RawResponse | number>;

const call =
  (method: string, path: string | ((ids: Ids) => string), body?: unknown): Step =>
  (ids) =>
    api(daemon, method, typeof path === "string" ? path : path(ids), body);

/** One call per operation, in an order that creates what later calls name. */
const STEPS: Array<[operationId: string, step: Step]> = [
  ["getHealth", () => api(daemon, "GET", "/api/health", undefined, null)],
  ["getStatus", call("GET", "/api/status")],
  ["getOpenApi", call("GET", "/api/openapi.json")],
  [
    "createLoginCode",
    async (ids) => {
      const answer = await api(daemon, "POST", "/api/auth/login-code");
      ids.loginCode = answer.json().code;
      return answer;
    },
  ],
  ["login", (ids) => raw(`${daemon.url}/login?code=${encodeURIComponent(ids.loginCode)}`)],
  ["setVaultSecret", call("PUT", "/api/vault", { key: "contract_key", value: "contract value" })],
  ["listVaultKeys", call("GET", "/api/vault")],
  ["deleteVaultSecret", call("DELETE", "/api/vault", { key: "contract_key" })],
  ["getDoctorReport", call("GET", "/api/doctor")],
  ["listDocs", call("GET", "/api/docs?q=token")],
  ["getDoc", call("GET", "/api/docs/http-api.md")],
  ["listRouterRoutes", call("GET", "/api/router/routes")],
  [
    "setRouterRoute",
    call("PUT", "/api/router/routes/conversation", { provider: "lowbit_server", model: "contract-model" }),
  ],
  ["listModels", call("GET", "/api/router/models")],
  ["classifyMessage", call("GET", "/api/router/classify?message=write%20a%20python%20function")],
  ["getEmbeddedModel", call("GET", "/api/router/embedded")],
  ["reloadEmbeddedModel", call("POST", "/api/router/embedded/reload")],
  ["calibrateEmbeddedModel", call("POST", "/api/router/embedded/calibrate")],
  ["startEmbeddedDownload", call("POST", "/api/router/embedded/download")],
  ["getEmbeddedDownload", call("GET", "/api/router/embedded/download")],
  ["getPrometheusMetrics", call("GET", "/metrics")],
  ["getBudget", call("GET", "/api/budget")],
  ["setBudgetLimits", call("POST", "/api/budget", { max_tokens_per_session: 1_000_000 })],
  ["getMemorySettings", call("GET", "/api/memory/second-brain/settings")],
  ["setMemorySettings", call("POST", "/api/memory/second-brain/settings", { learning_enabled: false })],
  [
    "createMemory",
    async (ids) => {
      const body = { content: "The user drinks green tea", kind: "preference" };
      const answer = await api(daemon, "POST", "/api/memory/second-brain/items", body);
      ids.memoryId = answer.json().memory.id;
      return answer;
    },
  ],
  ["searchMemory", call("GET", "/api/memory/second-brain/search?q=green%20tea")],
  ["getMemoryOverview", call("GET", "/api/memory/second-brain/overview")],
  ["deleteMemory", call("DELETE", (ids) => `/api/memory/second-brain/items/${ids.memoryId}`)],
  ["clearMemory", call("POST", "/api/memory/second-brain/clear")],
  [
    "createTask",
    async (ids) => {
      const answer = await api(daemon, "POST", "/api/tasks", { message: "Summarise my day", wait: true });
      ids.taskId = answer.json().id;
      ids.sessionId = answer.json().session_id;
      return answer;
    },
  ],
  [
    "sendMessage",
    async (ids) => {
      const started = await api(daemon, "POST", "/api/message", { message: "Hello", session_id: ids.sessionId });
      expect(started.status).toBe(202);
      expect((await api(daemon, "POST", "/api/message", { message: "/help" })).status).toBe(200);
      const frames = await readFrames(
        "/api/message",
        { method: "POST", body: JSON.stringify({ message: "Tell me more", stream: true }) },
        () => false,
      );
      checkFrames(frames, taskStreamMessageSchema, (f) => ({ event: f.event, data: JSON.parse(f.data) }));
      expect(frames[0]!.event).toBe("start");
      expect(frames.at(-1)!.event).toBe("done");
      return api(daemon, "POST", "/api/message", { message: "And then?", wait: true });
    },
  ],
  ["listTasks", call("GET", "/api/tasks?limit=2")],
  ["getTask", call("GET", (ids) => `/api/tasks/${ids.taskId}`)],
  ["listTaskEvents", call("GET", (ids) => `/api/tasks/${ids.taskId}/events`)],
  ["getTaskReport", call("GET", (ids) => `/api/tasks/${ids.taskId}/report`)],
  ["getTaskQueue", call("GET", (ids) => `/api/tasks/${ids.taskId}/queue`)],
  ["clearTaskQueue", call("DELETE", (ids) => `/api/tasks/${ids.taskId}/queue`)],
  ["cancelTask", call("POST", (ids) => `/api/tasks/${ids.taskId}/cancel`)],
  ["listSessions", call("GET", "/api/sessions")],
  ["listSessionMessages", call("GET", (ids) => `/api/sessions/${ids.sessionId}/messages`)],
  ["startNewSession", call("POST", (ids) => `/api/sessions/${ids.sessionId}/new`)],
  ["listAgents", call("GET", "/api/agents")],
  ["getRouterMetrics", call("GET", "/api/router/metrics")],
  ["resetBudgetUsage", call("POST", "/api/budget/reset-session", {})],
  ["listTools", call("GET", "/api/tools")],
  ["getEffectiveTools", call("GET", "/api/tools/effective")],
  ["getToolsPolicy", call("GET", "/api/tools/policy")],
  [
    "putToolsPolicy",
    () =>
      api(daemon, "PUT", "/api/tools/policy", {
        yaml: `# kept as sent\n${stringify({ allowed_read_paths: [work], allowed_write_paths: [work], require_approval: ["write_file"] })}`,
      }),
  ],
  ["getAgentProfile", call("GET", "/api/settings/agent-profile")],
  [
    "putAgentProfile",
    call("PUT", "/api/settings/agent-profile", {
      name: "Assistant",
      role: "Personal assistant",
      personality: "Helpful.",
      rules: [],
      formality: "default",
    }),
  ],
  [
    "invokeTool",
    async (ids) => {
      for (const name of ["a", "b", "c"]) {
        const body = { path: join(work, `${name}.txt`), content: name };
        const waiting = await api(daemon, "POST", "/api/tools/write_file/invoke", body);
        expect(waiting.status).toBe(202);
        ids.queueItems.push(waiting.json().queue_item_id);
      }
      return api(daemon, "POST", "/api/tools/read_file/invoke", { path: join(work, "notes.txt") });
    },
  ],
  ["listQueueItems", call("GET", "/api/permissions/queue?status=pending")],
  ["getQueueItem", call("GET", (ids) => `/api/permissions/queue/${ids.queueItems[0]}`)],
  ["approveQueueItem", call("POST", (ids) => `/api/permissions/queue/${ids.queueItems[0]}/approve`, { note: "ok" })],
  ["denyQueueItem", call("POST", (ids) => `/api/permissions/queue/${ids.queueItems[1]}/deny`)],
  ["expireQueueItem", call("POST", (ids) => `/api/permissions/queue/${ids.queueItems[2]}/expire`)],
  [
    "createDecision",
    async (ids) => {
      const body = { tool: "read_file", scope: work, effect: "allow" };
      const answer = await api(daemon, "POST", "/api/permissions/decisions", body);
      ids.decisionId = answer.json().id;
      return answer;
    },
  ],
  ["listDecisions", call("GET", "/api/permissions/decisions")],
  ["deleteDecision", call("DELETE", (ids) => `/api/permissions/decisions/${ids.decisionId}`)],
  ["getApprovalMode", call("GET", "/api/permissions/mode")],
  ["setApprovalMode", call("POST", "/api/permissions/mode", { mode: "ask_me" })],
  ["listSkills", call("GET", "/api/skills")],
  ["getSkill", call("GET", "/api/skills/tea-notes")],
  ["reloadSkills", call("POST", "/api/skills/reload")],
  ["installSkill", call("POST", "/api/skills/install", { url: "https://example.com/skills/x/SKILL.md" })],
  ["uninstallSkill", call("DELETE", "/api/skills/tea-notes")],
  ["listPlugins", call("GET", "/api/plugins")],
  ["listCatalog", call("GET", "/api/plugins/catalog")],
  ["getPlugin", call("GET", "/api/plugins/nosuch")],
  ["reloadPlugins", call("POST", "/api/plugins/reload")],
  ["installPlugin", call("POST", "/api/plugins/install", { path: "/nonexistent/plugin" })],
  ["uninstallPlugin", call("DELETE", "/api/plugins/nosuch")],
  ["sendPluginFeedback", call("POST", "/api/plugins/nosuch/feedback", { rating: "up" })],
  ["resetPluginReputation", call("POST", "/api/plugins/reputation/reset", {})],
  ["listRoutingRules", call("GET", "/api/plugins/routing_rules?message=hello")],
  ["matchRoutingRule", call("POST", "/api/plugins/routing_rules/match", { message: "hello" })],
  [
    "createSchedule",
    async (ids) => {
      const body = { name: "daily tea", description: "Remind me about tea", interval_secs: 86_400 };
      const answer = await api(daemon, "POST", "/api/schedules", body);
      ids.scheduleId = answer.json().id;
      return answer;
    },
  ],
  ["listSchedules", call("GET", "/api/schedules")],
  [
    "getCalendar",
    call(
      "GET",
      () =>
        `/api/calendar?from=${new Date().toISOString().slice(0, 10)}&to=${new Date(Date.now() + 3 * 86_400_000).toISOString().slice(0, 10)}`,
    ),
  ],
  ["getSchedule", call("GET", (ids) => `/api/schedules/${ids.scheduleId}`)],
  ["pauseSchedule", call("POST", (ids) => `/api/schedules/${ids.scheduleId}/pause`)],
  ["resumeSchedule", call("POST", (ids) => `/api/schedules/${ids.scheduleId}/resume`)],
  ["deleteSchedule", call("DELETE", (ids) => `/api/schedules/${ids.scheduleId}`)],
  ["getMission", call("GET", "/api/autonomous-mission")],
  ["updateMission", call("PUT", "/api/autonomous-mission", { objective: "Keep notes tidy" })],
  ["pauseMission", call("POST", "/api/autonomous-mission/pause")],
  ["resumeMission", call("POST", "/api/autonomous-mission/resume")],
  ["listMissionEvents", call("GET", "/api/autonomous-mission/events")],
  ["listTimeline", call("GET", "/api/timeline")],
  ["getDataOverview", call("GET", "/api/data")],
  ["exportData", call("GET", "/api/data/export")],
  // Refused (400, documented): deleting the history here would empty the event stream read below.
  ["deleteHistory", call("POST", "/api/data/delete-history", { confirm: "no" })],
  ["listOpenAiModels", call("GET", "/v1/models")],
  [
    "createChatCompletion",
    async () => {
      const body = { model: "assistant", messages: [{ role: "user", content: "Hi" }] };
      const frames = await readFrames(
        "/v1/chat/completions",
        { method: "POST", body: JSON.stringify({ ...body, stream: true, stream_options: { include_usage: true } }) },
        () => false,
      );
      const chunk = doc.paths["/v1/chat/completions"].post.responses["200"].content["text/event-stream"].schema;
      expect(chunk).toEqual({ $ref: "#/components/schemas/ChatCompletionStreamMessage" });
      expect(frames.at(-1)!.data).toBe("[DONE]");
      expect(frames.slice(0, -1).every((f) => JSON.parse(f.data).object === "chat.completion.chunk")).toBe(true);
      return api(daemon, "POST", "/v1/chat/completions", body);
    },
  ],
  [
    "streamEvents",
    async () => {
      const frames = await readFrames("/api/events?last_event_id=0", { method: "GET" }, (seen) => seen.length >= 40);
      checkFrames(frames, eventMessageSchema, (f) => ({ id: f.id, event: f.event, data: JSON.parse(f.data) }));
      expect(new Set(frames.map((f) => f.event)).size).toBeGreaterThan(10);
      return 200;
    },
  ],
];

describe("every operation", () => {
  it("has a call in this test, and each call answers a status and a body the document declares", async () => {
    const documented = new Map(operations().map((entry) => [entry.op.operationId as string, entry]));
    expect([...STEPS.map(([id]) => id)].sort()).toEqual([...documented.keys()].sort());
    const ids: Ids = {
      loginCode: "",
      taskId: "",
      sessionId: "",
      memoryId: "",
      scheduleId: "",
      decisionId: "",
      queueItems: [],
    };
    const problems: string[] = [];
    for (const [operationId, step] of STEPS) {
      const answer = await step(ids);
      const status = typeof answer === "number" ? answer : answer.status;
      const { op } = documented.get(operationId)!;
      const body = typeof answer === "number" ? "" : answer.body.slice(0, 400);
      if (!op.responses[String(status)]) problems.push(`${operationId}: ${status} is not documented: ${body}`);
      // 503 is calibrate's documented answer without a model file; any other 5xx is a fault or a contract break.
      if (status >= 500 && !(operationId === "calibrateEmbeddedModel" && status === 503)) {
        problems.push(`${operationId}: ${status} ${body}`);
      }
    }
    expect(problems).toEqual([]);
    // The calls above really succeeded where they could: the records they made were read back.
    expect(ids.taskId).not.toBe("");
    expect(ids.queueItems).toHaveLength(3);
    expect(daemon.output()).not.toContain("response contract broken");
  }, 120_000);
});
