import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLogger } from "../../../src/log/logger.ts";
import { registerSecret } from "../../../src/util/redact.ts";
import { tempDataDir } from "../../helpers/daemon.ts";
import { type ScriptedServer, startOpenAiServer } from "../servers/openaiServer.ts";
import { collect, testRouter, textOf } from "./helpers.ts";

// ASSISTANT_LOG_LLM_RESPONSE=1: the full text of each answer goes to the daemon log at info level, through the
// logger's redaction, so a secret the vault knows never reaches the file even when a model repeats it.

const SECRET = "sk-vault-canary-4d81e";

let server: ScriptedServer;
beforeEach(async () => {
  server = await startOpenAiServer();
});
afterEach(async () => {
  await server.close();
});

function routerLoggingTo(file: string, env: NodeJS.ProcessEnv) {
  const routes = {
    global: { default_max_retries: 1 },
    providers: { lowbit_server: { base_url: `${server.url}/v1` } },
    task_types: { conversation: { primary: { provider: "lowbit_server" as const, model: "local-a" } } },
  };
  return testRouter(routes, { env, logger: createLogger({ level: "info", file }) }).router;
}

describe("ASSISTANT_LOG_LLM_RESPONSE", () => {
  it("=1 logs the whole answer of the attempt that succeeded, at info, with known secrets redacted", async () => {
    registerSecret(SECRET); // as the vault does for every value it reads or stores
    const file = join(tempDataDir(), "daemon.log");
    const router = routerLoggingTo(file, { ASSISTANT_LOG_LLM_RESPONSE: "1" });
    server.enqueue(
      { kind: "cut", afterChunks: 2, text: ["Lost ", "words ", "here"] }, // reset, then retried
      { kind: "reply", text: ["The pin is ", SECRET, ", keep it safe."] },
    );
    const events = await collect(router);
    expect(textOf(events)).toBe(`The pin is ${SECRET}, keep it safe.`); // the caller gets the answer as is

    const lines = readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => line.includes("llm response"));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/ INFO {2}llm response \{/);
    expect(JSON.parse(lines[0]!.slice(lines[0]!.indexOf("{")))).toEqual({
      task_type: "conversation",
      provider: "lowbit_server",
      model: "local-a",
      text: "The pin is [REDACTED], keep it safe.",
    });
    expect(readFileSync(file, "utf8")).not.toContain(SECRET);
  });

  it("is off by default", async () => {
    const file = join(tempDataDir(), "daemon.log");
    const router = routerLoggingTo(file, {});
    server.enqueue({ kind: "reply", text: "Nothing to see." });
    expect(textOf(await collect(router))).toBe("Nothing to see.");
    expect(existsSync(file) ? readFileSync(file, "utf8") : "").not.toContain("llm response");
  });
});
