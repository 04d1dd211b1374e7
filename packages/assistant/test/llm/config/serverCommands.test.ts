import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allFileTexts, type RunOptions, sandbox } from "../../setup/helpers.ts";
import { closedPort } from "../providers/helpers.ts";
import { startOllamaServer } from "../servers/ollamaServer.ts";
import { type ScriptedServer, startOpenAiServer } from "../servers/openaiServer.ts";

// `assistant config provider set-local-server | set-lowbit-server | add-cloud-a --url | add-cloud-b --url` through
// the real CLI: each asks the server before saving (which protocol answers, which models it lists) and refuses,
// in one sentence naming what to run instead, a server that would fail at the first chat.

const MASTER = "server-commands-master-key";
const SECRET = "sk-endpoint-5c1e0b77-never-in-a-file";

let openai: ScriptedServer;
let ollama: ScriptedServer;

beforeAll(async () => {
  [openai, ollama] = await Promise.all([
    startOpenAiServer({
      models: [
        { id: "fake-7b", object: "model" },
        { id: "fake-70b", object: "model" },
      ],
    }),
    startOllamaServer({ models: [{ name: "llama3.2:latest" }, { name: "qwen3:0.6b" }] }),
  ]);
});
afterAll(async () => {
  await Promise.all([openai.close(), ollama.close()]);
});

function box() {
  const b = sandbox();
  const run = (args: string[], options: RunOptions = {}) =>
    b.run(args, { ...options, env: { ASSISTANT_VAULT_MASTER_KEY: MASTER, ...options.env } });
  return { ...b, run };
}

const provider = (...args: string[]) => ["config", "provider", ...args];

describe("assistant config provider set-lowbit-server", () => {
  it("checks an OpenAI-compatible server, saves its URL and route, and keeps the file's comments", async () => {
    const b = box();
    mkdirSync(b.dataDir);
    writeFileSync(b.file("llm_router.yaml"), "# my notes\ntask_types: {}\n");
    const url = `${openai.url}/v1`;
    const set = await b.run(
      provider("set-lowbit-server", "--url", url, "--category", "conversation", "--model", "fake-7b"),
    );
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toBe(
      [
        `${url} answers the OpenAI API; it lists 2 models: fake-7b, fake-70b`,
        `providers.lowbit_server.base_url: ${url}`,
        "conversation: primary lowbit_server/fake-7b (was assistant_embedded/default, now the first fallback)",
        "  fallback: assistant_embedded/default, assistant_core/core",
        `saved to ${b.file("llm_router.yaml")}; the daemon uses it from its next start`,
        "",
      ].join("\n"),
    );
    expect(b.read("llm_router.yaml")).toMatch(/^# my notes\n/);
    const router = b.yaml("llm_router.yaml");
    expect(router.providers.lowbit_server).toEqual({ base_url: url });
    expect(router.task_types.conversation.primary).toEqual({ provider: "lowbit_server", model: "fake-7b" });
  });

  it("without a route, saves the URL and prints the command that makes it answer chats", async () => {
    const b = box();
    const set = await b.run(provider("set-lowbit-server", "--url", openai.url, "--json"));
    expect(set.code, set.stderr).toBe(0);
    expect(set.json()).toMatchObject({
      provider: "lowbit_server",
      base_url: openai.url,
      server: { protocol: "openai", models: ["fake-7b", "fake-70b"] },
    });
    const text = await b.run(provider("set-lowbit-server", "--url", openai.url));
    expect(text.stdout).toContain(
      `to answer your chats with it: assistant config provider set-lowbit-server --url ${openai.url} --category conversation --model fake-7b\n`,
    );
  });

  it("refuses an Ollama-only server, a model it does not list and a closed port, leaving the file as it was", async () => {
    const b = box();
    const mismatch = await b.run(provider("set-lowbit-server", "--url", ollama.url));
    expect(mismatch).toMatchObject({ code: 1, stdout: "" });
    expect(mismatch.stderr).toBe(
      `error: ${ollama.url} is an Ollama server (GET ${ollama.url}/api/tags answers) without the OpenAI API (GET ${ollama.url}/v1/models answered HTTP 404), which lowbit_server speaks: use \`assistant config provider set-local-server --url ${ollama.url}\`\n`,
    );

    const unknown = await b.run(
      provider("set-lowbit-server", "--url", openai.url, "--category", "conversation", "--model", "gpt-9"),
    );
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe(`error: ${openai.url} has no model "gpt-9"; it lists 2 models: fake-7b, fake-70b\n`);

    const noModel = await b.run(provider("set-lowbit-server", "--url", openai.url, "--category", "conversation"));
    expect(noModel.stderr).toBe(
      "error: a category needs the model lowbit_server should use for it (--model); it lists 2 models: fake-7b, fake-70b\n",
    );

    const closed = `http://127.0.0.1:${await closedPort()}/v1`;
    const unreachable = await b.run(provider("set-lowbit-server", "--url", closed));
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toBe(
      `error: cannot reach ${closed} (ECONNREFUSED): start the server or check the URL (--no-probe saves it without checking)\n`,
    );
    expect(existsSync(b.file("llm_router.yaml"))).toBe(false);

    // --no-probe is for a server that is not running yet.
    const later = await b.run(provider("set-lowbit-server", "--url", closed, "--no-probe"));
    expect(later.code, later.stderr).toBe(0);
    expect(b.yaml("llm_router.yaml").providers.lowbit_server).toEqual({ base_url: closed });
  });
});

describe("assistant config provider set-local-server", () => {
  it("checks an Ollama server and accepts a model name without its :latest tag", async () => {
    const b = box();
    const set = await b.run(
      provider("set-local-server", "--url", ollama.url, "--category", "conversation", "--model", "llama3.2"),
    );
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toMatch(
      /^http:\/\/127\.0\.0\.1:\d+ answers Ollama's API \(Ollama 0\.12\.0\); it lists 2 models/,
    );
    expect(b.yaml("llm_router.yaml").task_types.conversation.primary).toEqual({
      provider: "local_server",
      model: "llama3.2",
    });
  });

  it("refuses an OpenAI-compatible server, naming set-lowbit-server", async () => {
    const b = box();
    const res = await b.run(provider("set-local-server", "--url", `${openai.url}/v1`));
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(
      `error: ${openai.url}/v1 is an OpenAI-compatible server (GET ${openai.url}/v1/models answers), not an Ollama one (GET ${openai.url}/api/tags answered HTTP 404), and local_server speaks Ollama's API: use \`assistant config provider set-lowbit-server --url ${openai.url}/v1\`\n`,
    );
    expect(existsSync(b.file("llm_router.yaml"))).toBe(false);
  });
});

describe("assistant config provider add-cloud-a / add-cloud-b --url", () => {
  it("asks the endpoint with the piped key, then stores the key in the vault and the URL in the file", async () => {
    const b = box();
    const before = openai.requests.length;
    const add = await b.run(
      provider("add-cloud-a", "--url", `${openai.url}/v1`, "--category", "conversation", "--model", "fake-70b"),
      { input: `${SECRET}\n` },
    );
    expect(add.code, add.stderr).toBe(0);
    expect(add.stdout).toContain("stored the cloud_a API key in the vault as cloud_a_api_key\n");
    expect(add.stdout).toContain(`providers.cloud_a.base_url: ${openai.url}/v1\n`);
    const listing = openai.requests.slice(before).find((r) => r.path === "/v1/models");
    expect(listing?.headers.authorization).toBe(`Bearer ${SECRET}`);
    const router = b.yaml("llm_router.yaml");
    expect(router.providers.cloud_a).toEqual({ api_key_ref: "vault://cloud_a_api_key", base_url: `${openai.url}/v1` });
    expect(router.task_types.conversation.primary).toEqual({ provider: "cloud_a", model: "fake-70b" });
    for (const { path, text } of allFileTexts(b.dataDir)) {
      if (!path.endsWith("vault.json")) expect(text, path).not.toContain(SECRET);
    }
    expect(add.stdout + add.stderr).not.toContain(SECRET);
  });

  it("refuses a key the endpoint refuses, and an Ollama endpoint, storing nothing", async () => {
    const b = box();
    openai.enqueue({ kind: "status", status: 401, path: "/v1/models" });
    const refused = await b.run(provider("add-cloud-b", "--url", openai.url), { input: SECRET });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      `error: ${openai.url} refused the API key (GET ${openai.url}/v1/models answered HTTP 401): check the key, or store the right one with \`assistant vault set cloud_b_api_key\`\n`,
    );
    expect(refused.stderr).not.toContain(SECRET);
    expect((await b.run(["vault", "list", "--json"])).stdout).not.toContain("cloud_b_api_key");

    const ollamaEndpoint = await b.run(provider("add-cloud-b", "--url", ollama.url), { input: SECRET });
    expect(ollamaEndpoint.code).toBe(1);
    expect(ollamaEndpoint.stderr).toContain("is an Ollama server");
    expect(ollamaEndpoint.stderr).toContain(`use \`assistant config provider set-local-server --url ${ollama.url}\``);
    expect(existsSync(b.file("llm_router.yaml"))).toBe(false);

    const unknown = await b.run(
      provider("add-cloud-b", "--url", openai.url, "--category", "conversation", "--model", "nope"),
      { input: SECRET },
    );
    expect(unknown.stderr).toBe(`error: ${openai.url} has no model "nope"; it lists 2 models: fake-7b, fake-70b\n`);
    expect(existsSync(b.file("llm_router.yaml"))).toBe(false);
  });
});
