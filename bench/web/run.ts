// bench/web: the web UI in the real browser (Debian's /usr/bin/chromium through playwright-core) against a real
// daemon serving packages/web/dist, with the scripted OpenAI-protocol server as the model (startWebRig(),
// packages/web/test/browser.ts). Issue 18's targets, medians of --runs repetitions:
//   initial JS        the JavaScript files index.html loads (its <script src> and modulepreload links), as the
//                     daemon serves them, gzipped here at level 9: < 250 KB
//   Chat paint        a fresh page at /chat: navigation start (performance.timeOrigin) to the Message field having
//                     a box, checked on every animation frame by a script added before the page's own; first
//                     contentful paint (PerformanceObserver 'paint') printed beside: < 1 s
//   tab switch        for each of the ten tabs, the key press (1-9; Data: Enter on its focused tab) to the new
//                     panel's heading (its first h1; Chat: the Message field) having a box, on the next frame: < 100 ms
//   scroll 1,000      a session of 1,000 messages (500 exchanges through POST /api/message, the scripted model
//                     answering at once) opened in Chat and scrolled top to bottom in 2 s, frames counted by
//                     requestAnimationFrame: average fps >= 30 (the worst 250 ms window is printed too), and how
//                     many of the messages the tab shows (all 1,000 must be reachable)
//   idle RSS          two fresh daemons side by side: one with the UI opened in a page (every tab visited, the page
//                     left open), one never opened; VmRSS after --idle-secs: growth < 10 MB
// Run: npm run bench:web [-- --runs 5 --idle-secs 10]. Numbers are noisy on a shared machine.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { AssistantClient } from "@assistant/client";
import { scriptedRouterYaml, startScriptedDaemon } from "../../packages/assistant/test/agent/helpers.ts";
import { tempDataDir } from "../../packages/assistant/test/helpers/daemon.ts";
import { startWebRig } from "../../packages/web/test/browser.ts";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "5" },
    "idle-secs": { type: "string", default: "10" },
  },
});
const runs = Number(values.runs);
const idleSecs = Number(values["idle-secs"]);
const TABS = ["Chat", "Scheduled", "Router", "Doc", "Tasks", "Calendar", "Memory", "Mission", "Settings", "Data"];
const MESSAGES = 1_000;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const verdict = (ok: boolean) => (ok ? "PASS" : "FAIL");
// What the functions run in the page use of the DOM (this file is type-checked without the DOM's types).
interface PageElement {
  parentElement: PageElement | null;
  scrollTop: number;
  scrollHeight: number;
  clientHeight: number;
  getBoundingClientRect(): { height: number };
  querySelector(selector: string): PageElement | null;
  blur(): void;
}
declare const document: {
  getElementById(id: string): PageElement | null;
  querySelector(selector: string): PageElement | null;
  scrollingElement: PageElement | null;
  activeElement: PageElement | null;
};
declare const window: { chatReady?: number; fcp?: number };
declare function requestAnimationFrame(callback: (now: number) => void): number;
declare function addEventListener(
  type: "keydown",
  listener: () => void,
  options: { capture: boolean; once: boolean },
): void;
declare function getComputedStyle(element: PageElement): { overflowY: string };

const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;

const rig = await startWebRig();
const { page, daemon, api } = rig;
try {
  await rig.signIn();

  // 1. The initial JavaScript, as served.
  const html = await (await fetch(`${daemon.url}/`)).text();
  const scripts = [
    ...html.matchAll(/<script[^>]*\bsrc="([^"]+)"/g),
    ...html.matchAll(/<link[^>]*rel="modulepreload"[^>]*href="([^"]+)"/g),
  ].map((m) => m[1]!);
  let rawBytes = 0;
  let gzBytes = 0;
  for (const src of scripts) {
    const body = Buffer.from(await (await fetch(new URL(src, daemon.url))).arrayBuffer());
    rawBytes += body.length;
    gzBytes += gzipSync(body, { level: 9 }).length;
  }
  const gzKB = gzBytes / 1024;

  // 2. First meaningful paint of Chat: a fresh page per run (the browser's cache is shared, as for a returning user).
  const paints: number[] = [];
  const fcps: number[] = [];
  for (let i = 0; i < runs; i++) {
    const fresh = await rig.context.newPage();
    await fresh.addInitScript(() => {
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries())
          if (entry.name === "first-contentful-paint") window.fcp = entry.startTime;
      }).observe({ type: "paint" as "mark", buffered: true }); // a browser entry type Node's types do not list
      const look = () => {
        const field = document.getElementById("message");
        if (field && field.getBoundingClientRect().height > 0) {
          performance.mark("chat-ready");
          window.chatReady = performance.now();
        } else requestAnimationFrame(look);
      };
      requestAnimationFrame(look);
    });
    await fresh.goto(`${daemon.url}/chat`);
    await fresh.getByLabel("Message").waitFor();
    await fresh.waitForFunction(() => window.chatReady !== undefined);
    const [ready, fcp] = await fresh.evaluate(() => [window.chatReady!, window.fcp ?? Number.NaN]);
    paints.push(ready);
    fcps.push(fcp);
    await fresh.close();
  }

  // 3. Tab switches: key press to the new panel's heading on screen, measured inside the page.
  await page.goto(`${daemon.url}/chat`);
  await page.getByLabel("Message").waitFor();
  await page.evaluate(() => document.activeElement?.blur());
  const switches: Record<string, number[]> = Object.fromEntries(TABS.map((t) => [t, []]));
  for (let i = 0; i < runs; i++) {
    for (const name of [...TABS.slice(1), "Chat"]) {
      const measured = page.evaluate(
        (tab) =>
          new Promise<number>((resolve) => {
            addEventListener(
              "keydown",
              () => {
                const start = performance.now();
                const look = () => {
                  const panel = document.querySelector(`#panel[aria-label="${tab}"]`);
                  const heading = panel?.querySelector(tab === "Chat" ? "#message" : "h1");
                  if (heading && heading.getBoundingClientRect().height > 0) resolve(performance.now() - start);
                  else requestAnimationFrame(look);
                };
                requestAnimationFrame(look);
              },
              { capture: true, once: true },
            );
          }),
        name,
      );
      // The listener is in place once evaluate's script ran: give it a frame before pressing.
      await page.waitForTimeout(50);
      if (name === "Data") {
        await page.getByRole("tab", { name: "Data" }).focus();
        await page.keyboard.press("Enter");
      } else {
        await page.keyboard.press(String(TABS.indexOf(name) + 1));
      }
      switches[name]!.push(await measured);
      await page.evaluate(() => document.activeElement?.blur());
      await page.waitForTimeout(100);
    }
  }

  // 4. A session of 1,000 messages, scrolled.
  const first = await api.sendMessage({ message: "message 1", wait: true });
  const sessionId = (first as { session_id: string }).session_id;
  for (let i = 2; i <= MESSAGES / 2; i++) {
    await api.sendMessage({ message: `message ${i}`, session_id: sessionId, wait: true });
  }
  await page.goto(`${daemon.url}/chat`);
  await page
    .getByRole("navigation", { name: "Sessions" })
    .getByRole("button", { name: new RegExp(`^${sessionId.slice(0, 8)}`) })
    .click();
  await page.getByText(`message ${MESSAGES / 2}`, { exact: true }).waitFor();
  const shown = await page.locator("ol.turns > li").count();
  const fps: number[] = [];
  const worst: number[] = [];
  for (let i = 0; i < runs; i++) {
    const result = await page.evaluate(async (durationMs) => {
      // The element that scrolls: the nearest scrollable ancestor of the conversation, else the document.
      let scroller: PageElement = document.scrollingElement!;
      for (let el = document.querySelector("ol.turns"); el; el = el.parentElement) {
        const style = getComputedStyle(el);
        if (/(auto|scroll)/.test(style.overflowY) && el.scrollHeight > el.clientHeight) {
          scroller = el;
          break;
        }
      }
      scroller.scrollTop = 0;
      await new Promise((r) => requestAnimationFrame(r));
      const distance = scroller.scrollHeight - scroller.clientHeight;
      const frames: number[] = [];
      const start = performance.now();
      await new Promise<void>((done) => {
        const step = (now: number) => {
          frames.push(now);
          const progress = Math.min(1, (now - start) / durationMs);
          scroller.scrollTop = distance * progress;
          if (progress < 1) requestAnimationFrame(step);
          else done();
        };
        requestAnimationFrame(step);
      });
      const elapsed = frames.at(-1)! - frames[0]!;
      let worstWindow = Number.POSITIVE_INFINITY;
      for (let t = frames[0]!; t + 250 <= frames.at(-1)!; t += 50) {
        worstWindow = Math.min(worstWindow, frames.filter((f) => f >= t && f < t + 250).length * 4);
      }
      return { fps: ((frames.length - 1) * 1000) / elapsed, worst: worstWindow, distance };
    }, 2_000);
    fps.push(result.fps);
    worst.push(result.worst);
  }

  // 5. Idle RSS: a daemon with the UI opened beside one never opened, both fresh.
  const pair = await Promise.all(
    ["opened", "closed"].map(async () => {
      const dataDir = tempDataDir("assistant-bench-web-");
      writeFileSync(join(dataDir, "llm_router.yaml"), scriptedRouterYaml(rig.server.url));
      return startScriptedDaemon(dataDir);
    }),
  );
  const [opened, closed] = pair as [(typeof pair)[0], (typeof pair)[0]];
  const openedApi = new AssistantClient({ baseUrl: opened.url, token: opened.token });
  const uiPage = await rig.context.newPage();
  await uiPage.goto((await openedApi.createLoginCode()).url);
  await uiPage.waitForURL("**/chat");
  for (const name of TABS) {
    await uiPage.getByRole("tab", { name, exact: true }).click();
    await uiPage.waitForURL(`**/${name.toLowerCase()}`);
  }
  await uiPage.getByRole("tab", { name: "Chat", exact: true }).click();
  await new Promise((r) => setTimeout(r, idleSecs * 1000));
  const rssOpened: number[] = [];
  const rssClosed: number[] = [];
  for (let i = 0; i < runs; i++) {
    rssOpened.push(rssMiB(opened.process.pid!));
    rssClosed.push(rssMiB(closed.process.pid!));
    await new Promise((r) => setTimeout(r, 1000));
  }
  await uiPage.close();
  await opened.stop();
  await closed.stop();

  const r = (n: number) => n.toFixed(1);
  console.log(`web UI in Chromium, medians of ${runs} (shared machine: noisy)`);
  console.log(
    `  initial JS         ${r(gzKB).padStart(7)} KB gzipped (${scripts.length} file(s), ${r(rawBytes / 1024)} KB raw)  (target < 250) ${verdict(gzKB < 250)}`,
  );
  const paint = median(paints);
  console.log(
    `  Chat paint         ${r(paint).padStart(7)} ms to the Message field (first contentful paint ${r(median(fcps))} ms)  (target < 1000) ${verdict(paint < 1000)}`,
  );
  for (const name of TABS) {
    const ms = median(switches[name]!);
    console.log(`  tab switch ${name.padEnd(9)} ${r(ms).padStart(5)} ms  (target < 100) ${verdict(ms < 100)}`);
  }
  const f = median(fps);
  console.log(
    `  scroll the session ${r(f).padStart(7)} fps average (the ${shown} messages shown), worst 250 ms window ${r(median(worst))} fps  (target >= 30) ${verdict(f >= 30)}`,
  );
  console.log(
    `  messages shown     ${String(shown).padStart(7)} of ${MESSAGES} in the session  (target ${MESSAGES}) ${verdict(shown >= MESSAGES)}`,
  );
  const growth = median(rssOpened) - median(rssClosed);
  console.log(
    `  idle RSS           ${r(median(rssOpened))} MiB opened vs ${r(median(rssClosed))} MiB never opened: +${r(growth)} MiB  (target < 10) ${verdict(growth < 10)}`,
  );
  if (rig.problems.length > 0) {
    const kinds = [...new Set(rig.problems)];
    console.log(`WARNING: the page reported ${rig.problems.length} problem(s), ${kinds.length} distinct:`);
    for (const kind of kinds.slice(0, 5)) console.log(`  ${kind} (x${rig.problems.filter((p) => p === kind).length})`);
  }
} finally {
  await rig.close();
}
