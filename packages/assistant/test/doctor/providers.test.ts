import { mkdirSync, writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOllamaServer } from "../llm/servers/ollamaServer.ts";
import { type ScriptedServer, startOpenAiServer } from "../llm/servers/openaiServer.ts";
import { type Check, checkById, freePort, type Sandbox, sandbox } from "../setup/helpers.ts";

// `assistant doctor` probing the model servers the routes of llm_router.yaml name (src/doctor/checkProviders.ts):
// the real CLI against scripted servers of both protocols, running, stopped, hung, with the wrong protocol or
// without the model, and cloud providers with and without a key.

let openai: ScriptedServer;
let ollama: ScriptedServer;
let cloud: ScriptedServer;
beforeAll(async () => {
  openai = await startOpenAiServer({ models: [{ id: "fake-7b", object: "model" }] });
  ollama = await startOllamaServer({ models: [{ name: "llama3.2:3b" }] });
  cloud = await startOpenAiServer({ models: [{ id: "gpt-4o-mini", object: "model" }] });
});
afterAll(async () => {
  await Promise.all([openai.close(), ollama.close(), cloud.close()]);
});

function boxWith(router: string): Sandbox {
  const box = sandbox();
  mkdirSync(box.dataDir);
  writeFileSync(box.file("llm_router.yaml"), router);
  return box;
}

async function doctor(box: Sandbox, env: NodeJS.ProcessEnv = {}) {
  const started = performance.now();
  const res = await box.run(["doctor", "--json"], { env: { ASSISTANT_PORT: String(await freePort()), ...env } });
  const report = res.json<{ checks: Check[]; advice: string[] }>();
  return {
    res,
    ms: performance.now() - started,
    check: (id: string) => checkById(report.checks, id),
    ids: report.checks.map((c) => c.id),
  };
}

const lowbitRoute = (url: string, model = "fake-7b") => `providers:
  lowbit_server:
    base_url: ${url}/v1
task_types:
  conversation:
    primary: {provider: lowbit_server, model: ${model}}
    fallback:
      - {provider: assistant_embedded, model: default}
      - {provider: assistant_core, model: core}
`;

describe("assistant doctor: the providers of the routes", () => {
  it("a running server with the route's model is ok, and the conversation route answers", async () => {
    const { res, check } = await doctor(boxWith(lowbitRoute(openai.url)));
    expect(res.code, res.stderr).toBe(0);
    expect(check("router.provider.lowbit_server")).toMatchObject({
      status: "ok",
      detail: "answers; has fake-7b (routes: conversation)",
    });
    expect(check("router.conversation")).toMatchObject({
      status: "ok",
      detail: "lowbit_server/fake-7b can answer",
    });
  });

  it("a stopped server is named with why and its fix, and the conversation route is not green", async () => {
    const port = await freePort();
    const { res, check } = await doctor(boxWith(lowbitRoute(`http://127.0.0.1:${port}`)));
    expect(res.code, res.stderr).toBe(0); // a warning: the daemon still starts and the core still answers
    expect(check("router.provider.lowbit_server")).toMatchObject({
      status: "warn",
      detail: `cannot reach http://127.0.0.1:${port}/v1/models (ECONNREFUSED) (routes: conversation)`,
      fix: expect.stringMatching(/^start the server .*`assistant discover`/),
    });
    expect(check("router.conversation")).toMatchObject({
      status: "warn",
      detail: expect.stringMatching(
        /^no model can answer a conversation \(lowbit_server\/fake-7b -> assistant_embedded\/default\): lowbit_server\/fake-7b: cannot reach .*ECONNREFUSED.*; assistant_embedded\/default: .*only the built-in core would$/,
      ),
    });
  });

  it("a server that lists other models is named with what it has", async () => {
    const { check } = await doctor(boxWith(lowbitRoute(openai.url, "other-13b")));
    expect(check("router.provider.lowbit_server")).toMatchObject({
      status: "warn",
      detail: "answers, but has no model other-13b; it lists fake-7b (routes: conversation)",
      fix: expect.stringContaining("`assistant config models set <category> lowbit_server <model>`"),
    });
  });

  it("an OpenAI-compatible server configured as Ollama (local_server) is a protocol mismatch, said so", async () => {
    const box = boxWith(`providers:
  local_server:
    base_url: ${openai.url}
task_types:
  conversation:
    primary: {provider: local_server, model: fake-7b}
`);
    const { check } = await doctor(box);
    expect(check("router.provider.local_server")).toMatchObject({
      status: "warn",
      detail: expect.stringMatching(/answered HTTP 404.*the server does not speak the Ollama protocol/),
      fix: expect.stringContaining("lowbit_server"),
    });
  });

  it("an Ollama server: the model it has answers, the one it lacks is named with `ollama pull`", async () => {
    const both = await doctor(
      boxWith(`providers:
  local_server:
    base_url: ${ollama.url}
task_types:
  conversation:
    primary: {provider: local_server, model: "llama3.2:3b"}
  code_generation:
    primary: {provider: local_server, model: "qwen2.5-coder:7b"}
`),
    );
    expect(both.check("router.provider.local_server")).toMatchObject({
      status: "warn",
      detail:
        "answers, but has no model qwen2.5-coder:7b; it lists llama3.2:3b (routes: conversation, code_generation)",
      fix: expect.stringMatching(/^`ollama pull qwen2\.5-coder:7b`/),
    });
    expect(both.check("router.conversation")).toMatchObject({
      status: "ok",
      detail: "local_server/llama3.2:3b can answer",
    });
  });

  it("a hung server costs at most the probe deadline", async () => {
    const hung = await startOpenAiServer();
    hung.enqueue({ kind: "hang", path: "/v1/models" });
    try {
      const { check, ms } = await doctor(boxWith(lowbitRoute(hung.url)));
      expect(check("router.provider.lowbit_server")).toMatchObject({
        status: "warn",
        detail: "no answer within 2.5 s (routes: conversation)",
      });
      expect(ms).toBeLessThan(15_000); // the CLI's own start and the other checks included
    } finally {
      await hung.close();
    }
  });

  it("a cloud provider without a key is never called; with one only its model list is asked", async () => {
    const router = `providers:
  cloud_a:
    base_url: ${cloud.url}/v1
task_types:
  conversation:
    primary: {provider: cloud_a, model: gpt-4o-mini}
`;
    const before = cloud.requests.length;
    const without = await doctor(boxWith(router));
    expect(cloud.requests.length).toBe(before);
    expect(without.check("router.provider.cloud_a")).toMatchObject({
      status: "warn",
      detail: expect.stringContaining("cloud_a has no API key"),
      fix: "`assistant config provider add-cloud-a`",
    });

    const key = "sk-doctor-probe-secret";
    const withKey = await doctor(boxWith(router), { CLOUD_A_API_KEY: key });
    expect(withKey.check("router.provider.cloud_a")).toMatchObject({ status: "ok" });
    expect(withKey.check("router.conversation").status).toBe("ok");
    const sent = cloud.requests.slice(before);
    expect(sent.map((r) => `${r.method} ${r.path}`)).toEqual(["GET /v1/models"]);
    expect(sent[0]!.headers.authorization).toBe(`Bearer ${key}`);
    expect(withKey.res.stdout + withKey.res.stderr).not.toContain(key);
  });
});
