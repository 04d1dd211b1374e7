import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { AssistantClient } from "@assistant/client";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { scriptedRouterYaml, startScriptedDaemon } from "../../assistant/test/agent/helpers.ts";
import { type TestDaemon, tempDataDir } from "../../assistant/test/helpers/daemon.ts";
import { type ScriptedServer, startOpenAiServer } from "../../assistant/test/llm/servers/openaiServer.ts";

// What every browser test of the web UI stands on: Debian's Chromium (driven by playwright-core) against a real
// daemon serving the build of packages/web, with the scripted OpenAI-protocol server as the model, and the
// page's console errors collected so a test can assert there were none.

const CHROMIUM = "/usr/bin/chromium";

export interface WebRig {
  server: ScriptedServer;
  daemon: TestDaemon;
  context: BrowserContext;
  page: Page;
  /** Console errors and uncaught page errors, in order. */
  problems: string[];
  /** A one-time login URL, asked for the way `assistant open` does (src/cli/open.ts). */
  loginUrl(): Promise<string>;
  /** Opens a one-time login URL: the browser then holds a session cookie and shows /chat. */
  signIn(): Promise<void>;
  /** The typed client with the owner's token, for setting up data the way another surface would. */
  api: AssistantClient;
  close(): Promise<void>;
}

/** `cwd`: the daemon's working directory (where it looks for docs/), this process's by default. */
export async function startWebRig(options: { cwd?: string } = {}): Promise<WebRig> {
  const server = await startOpenAiServer();
  const dataDir = tempDataDir();
  writeFileSync(join(dataDir, "llm_router.yaml"), scriptedRouterYaml(server.url));
  const daemon = await startScriptedDaemon(dataDir, {}, options);
  // Chromium's profile socket path must stay short ("Socket path too long" under a long TMPDIR).
  const profile = mkdtempSync("/tmp/pw-");
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    locale: "en-US",
    args: ["--no-sandbox"],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(5_000); // a missing element fails its test with a clear message, before the test times out
  const problems: string[] = [];
  page.on("console", (message) => {
    // With the URL: Chromium's "Failed to load resource" line does not say which request failed.
    const where = message.location().url;
    if (message.type() === "error") problems.push(`console: ${message.text()}${where ? ` (${where})` : ""}`);
  });
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  const api = new AssistantClient({ baseUrl: daemon.url, token: daemon.token });
  const loginUrl = async () => (await api.createLoginCode()).url;
  return {
    server,
    daemon,
    context,
    page,
    problems,
    api,
    loginUrl,
    signIn: async () => {
      await page.goto(await loginUrl());
      await page.waitForURL("**/chat");
    },
    close: async () => {
      await context.close();
      await daemon.stop();
      await server.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
