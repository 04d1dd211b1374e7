import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { cleanUp, sandbox } from "../daemon/helpers.ts";
import { startOllamaServer } from "../llm/servers/ollamaServer.ts";
import { type ScriptedServer, startOpenAiServer } from "../llm/servers/openaiServer.ts";

// The scripted newcomer of docs/getting-started.md: a fresh data directory, a model server the person already
// runs (an OpenAI-compatible one such as LM Studio, vLLM or llama-server, and an Ollama one), and only the
// `assistant` commands the walk-through gives: discover, the command it prints as printed, start, chat, restart. No file
// is edited by hand; the answer must come from the server chosen.

let openai: ScriptedServer;
let ollama: ScriptedServer;

beforeAll(async () => {
  [openai, ollama] = await Promise.all([
    startOpenAiServer({
      models: [{ id: "fake-7b", object: "model" }],
      defaultBehaviour: { kind: "reply", text: "Hello from the OpenAI-compatible server" },
    }),
    startOllamaServer({
      models: [{ name: "llama3.2:3b" }],
      defaultBehaviour: { kind: "reply", text: "Hello from the Ollama server" },
    }),
  ]);
});
afterAll(async () => {
  await Promise.all([openai.close(), ollama.close()]);
});
afterEach(cleanUp);

/** The `use this server` command discover printed for a URL, as the argument list a shell would make of it. */
function useCommand(discoverOutput: string, url: string): string[] {
  const line = discoverOutput
    .split("\n")
    .find((text) => text.startsWith("  use this server: ") && text.includes(`--url ${url}`));
  if (!line) throw new Error(`discover printed no command for ${url}:\n${discoverOutput}`);
  const words = line.slice("  use this server: ".length).split(" ");
  expect(words[0]).toBe("assistant");
  for (const word of words) expect(word).toMatch(/^[\w.:/@+=-]+$/); // nothing a shell would change
  return words.slice(1);
}

describe("the first hour, scripted (docs/getting-started.md)", () => {
  it("discover finds both servers; its command as printed makes each answer the first chat", async () => {
    const box = await sandbox();
    expect(existsSync(box.dataDir)).toBe(true); // an empty folder: nothing in it yet
    const openaiUrl = `${openai.url}/v1`;

    // 1. What runs here? The URLs are the person's servers; discover tells which protocol each speaks.
    const discover = await box.cli(["discover", "--url", openai.url, "--url", ollama.url]);
    expect(discover.code, discover.stderr).toBe(0);
    expect(discover.stdout).toContain(`lowbit_server  ${openaiUrl}`);
    expect(discover.stdout).toContain("OpenAI-compatible, 1 model: fake-7b (--url)");
    expect(discover.stdout).toContain(`local_server   ${ollama.url}`);
    expect(discover.stdout).toContain("Ollama 0.12.0, 1 model: llama3.2:3b (--url)");

    // 2. Use the OpenAI-compatible server: the command as printed.
    const useOpenAi = useCommand(discover.stdout, openaiUrl);
    expect(useOpenAi).toEqual([
      ..."config provider set-lowbit-server --url".split(" "),
      openaiUrl,
      ..."--category conversation --model fake-7b".split(" "),
    ]);
    const set = await box.cli(useOpenAi);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toContain("conversation: primary lowbit_server/fake-7b");

    // 3. Start and ask: the answer comes from that server, with the model chosen.
    const start = await box.cli(["start"]);
    expect(start.code, start.stderr).toBe(0);
    const chat = await box.cli(["chat", "hello"]);
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout).toBe("Hello from the OpenAI-compatible server\n");
    const asked = openai.requests.find((r) => r.path === "/v1/chat/completions");
    expect(asked?.body).toMatchObject({ model: "fake-7b" });

    // 4. Switch to the Ollama server the same way; the daemon reads the file at start.
    const useOllama = useCommand(discover.stdout, ollama.url);
    const switched = await box.cli(useOllama);
    expect(switched.code, switched.stderr).toBe(0);
    expect(switched.stdout).toContain("the daemon is running: restart it");
    const restart = await box.cli(["restart"]);
    expect(restart.code, restart.stderr).toBe(0);
    const json = await box.cli(["chat", "--json", "hello again"]);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      reply: "Hello from the Ollama server",
      provider: "local_server",
      model: "llama3.2:3b",
    });
    expect(ollama.requests.some((r) => r.path === "/api/chat")).toBe(true);
    expect((await box.cli(["stop"])).code).toBe(0);

    // Nothing was written by hand: the router file is the one the commands made, and it validates.
    expect(existsSync(join(box.dataDir, "llm_router.yaml"))).toBe(true);
    expect((await box.cli(["config", "validate"])).code).toBe(0);
  });
});
