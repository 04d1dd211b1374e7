import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDaemon, type TestDaemon, tempDataDir } from "../../assistant/test/helpers/daemon.ts";
import type { ScriptedServer } from "../../assistant/test/llm/servers/openaiServer.ts";
import { startWebRig, type WebRig } from "./browser.ts";

// The web UI end to end (test/browser.ts: Chromium, the real daemon serving the build, the scripted model):
// sign-in by a one-time code as `assistant open` gets it, the shell, the security headers, and a streamed chat
// answer whose hostile HTML stays text.

// What the page's globals look like inside page.evaluate (this file is type-checked without the DOM's types).
declare const window: { localStorage: Record<string, string>; __pwned?: string };
declare const document: { cookie: string; documentElement: { lang: string; dataset: { theme?: string } } };

const TAB_NAMES = ["Chat", "Scheduled", "Router", "Doc", "Tasks", "Calendar", "Memory", "Mission", "Settings", "Data"];

let rig: WebRig;
let server: ScriptedServer;
let daemon: TestDaemon;
let context: BrowserContext;
let page: Page;
let problems: string[];

beforeAll(async () => {
  rig = await startWebRig();
  ({ server, daemon, context, page, problems } = rig);
}, 60_000);

afterAll(async () => {
  await rig?.close();
});

const loginUrl = () => rig.loginUrl();

const selectedTab = () => page.locator('[role="tab"][aria-selected="true"]').textContent();

describe("the web UI in a real browser", () => {
  it("without a session says to run `assistant open` and asks for no token", async () => {
    await page.goto(`${daemon.url}/chat`);
    await page.getByRole("heading", { name: "Sign in to your assistant" }).waitFor();
    expect(await page.locator("main").textContent()).toContain("assistant open");
    expect(await page.locator("input, textarea").count()).toBe(0);
    expect(await page.evaluate(() => Object.keys(window.localStorage).sort())).toEqual([
      "assistant.lang",
      "assistant.theme",
    ]);
    // A login code that does not exist is refused; the browser still has no session.
    await page.goto(`${daemon.url}/login?code=forged`);
    expect(await page.textContent("body")).toContain("assistant open");
    expect(await context.cookies()).toEqual([]);
  });

  it("a one-time code signs in at /chat: ten tabs, keys 1-9, strict headers, no console error", async () => {
    problems.length = 0;
    const response = await page.goto(await loginUrl());
    expect(new URL(page.url()).pathname).toBe("/chat");
    const headers = response!.headers();
    const csp = headers["content-security-policy"] ?? "";
    for (const directive of ["script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"]) {
      expect(csp).toContain(directive);
    }
    expect(csp).not.toContain("unsafe-inline");
    expect(headers["x-content-type-options"]).toBe("nosniff");
    expect(headers["referrer-policy"]).toBe("no-referrer");
    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({ name: "assistant_session", httpOnly: true, sameSite: "Strict" });
    // The cookie is the browser's alone: the page can neither read it nor hold the token.
    expect(await page.evaluate(() => document.cookie)).toBe("");
    expect(await page.content()).not.toContain(daemon.token);

    await page.getByTestId("status-daemon").getByText("Daemon: up").waitFor();
    await page.getByTestId("status-approvals").getByText("Pending approvals: 0").waitFor();
    expect(await page.getByRole("tab").allTextContents()).toEqual(TAB_NAMES);
    expect(await selectedTab()).toBe("Chat");

    for (const [index, name] of TAB_NAMES.slice(0, 9).entries()) {
      await page.keyboard.press(String(index + 1));
      await page.waitForURL(`**/${name.toLowerCase()}`);
      expect(await selectedTab()).toBe(name);
    }
    await page.getByRole("tab", { name: "Data" }).click();
    await page.waitForURL("**/data");
    await page.getByRole("heading", { name: "Data", exact: true }).waitFor();
    await page.goBack();
    await page.waitForURL("**/settings");
    expect(await selectedTab()).toBe("Settings");

    // A deep link loads the app on its tab; typing a digit in the message box is text, not a tab switch.
    await page.goto(`${daemon.url}/chat`);
    await page.getByLabel("Message").fill("");
    await page.getByLabel("Message").press("3");
    expect(new URL(page.url()).pathname).toBe("/chat");
    expect(await page.getByLabel("Message").inputValue()).toBe("3");
    expect(problems.join("\n")).toBe("");
  });

  it("switches theme and language, and keeps the choice", async () => {
    await page.getByLabel("Theme").selectOption("dark");
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe("dark");
    await page.getByLabel("Language").selectOption("fr");
    await page.getByTestId("status-daemon").getByText("Démon: actif").waitFor();
    await page.reload();
    expect(await page.evaluate(() => document.documentElement.lang)).toBe("fr");
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe("dark");
    await page.getByLabel("Thème").selectOption("system");
    await page.getByLabel("Langue").selectOption("en");
    expect(problems.join("\n")).toBe("");
  });

  it("streams a chat answer, and a hostile answer renders as text without running script", async () => {
    await page.goto(`${daemon.url}/chat`);
    const hostile =
      'Here: <script>window.__pwned = "script"</script> <img src=x onerror="window.__pwned = \'img\'"> ' +
      "[click me](javascript:window.__pwned='link') and **bold** done.";
    server.enqueue({ kind: "reply", text: ["Thinking ", "about ", "it. ", hostile], chunkDelayMs: 300 });
    await page.getByLabel("Message").fill("Tell me something");
    await page.getByRole("button", { name: "Send" }).click();
    const answer = page.locator(".turn-assistant .answer").last();
    // Streamed: the first pieces show while the last one has not arrived yet.
    await answer.getByText("Thinking about").waitFor();
    expect(await answer.textContent()).not.toContain("done.");
    await answer.getByText("done.").waitFor();

    const text = await answer.textContent();
    expect(text).toContain('<script>window.__pwned = "script"</script>');
    expect(text).toContain("<img src=x onerror=");
    expect(await answer.locator("script, img, iframe").count()).toBe(0);
    expect(await answer.locator("strong").textContent()).toBe("bold");
    expect(await answer.locator('a[href^="javascript"]').count()).toBe(0);
    expect(await page.evaluate(() => window.__pwned)).toBeUndefined();
    expect(await page.locator(".chat-bar code").textContent()).toMatch(/^[0-9a-f-]{36}$/);

    // New session: the next message starts another one.
    await page.getByRole("button", { name: "New session" }).click();
    expect(await page.locator(".turn").count()).toBe(0);
    expect(problems.join("\n")).toBe("");
  });
});

/** A GET with the path exactly as written (fetch and URL would resolve `..` first). */
function getPath(port: number, path: string): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    request({ host: "127.0.0.1", port, path }, (res) => {
      let body = "";
      res.on("data", (chunk) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, type: String(res.headers["content-type"]), body }));
    })
      .on("error", reject)
      .end();
  });
}

describe("serving the build", () => {
  it("serves only files of the build; the API's paths stay the API's", async () => {
    for (const path of ["/../package.json", "/%2e%2e/package.json", "/assets/..%2f..%2fpackage.json"]) {
      expect((await getPath(daemon.port, path)).status, path).toBe(403);
    }
    expect((await getPath(daemon.port, "/assets/missing.js")).status).toBe(404);
    const app = await getPath(daemon.port, "/tasks/some-task-id");
    expect(app.status).toBe(200);
    expect(app.type).toContain("text/html");
    const api = await getPath(daemon.port, "/api/no-such-route");
    expect(api.status).toBe(401);
    expect(JSON.parse(api.body).error.code).toBe("unauthorized");
    expect((await getPath(daemon.port, "/v1/nothing")).status).toBe(401);
  });

  it("says to run `npm run build` when the build is missing", async () => {
    const empty = mkdtempSync("/tmp/web-none-");
    const bare = await startDaemon({ ASSISTANT_WEB_DIR: empty }, tempDataDir());
    try {
      const page = await getPath(bare.port, "/chat");
      expect(page.status).toBe(503);
      expect(page.type).toContain("text/plain");
      expect(page.body).toContain("npm run build");
    } finally {
      await bare.stop();
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
