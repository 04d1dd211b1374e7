import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TABS } from "../src/tabs.ts";
import { startWebRig, type WebRig } from "./browser.ts";

// An axe-core scan of every tab, signed in, in Chromium against a real daemon (test/browser.ts) with a little real
// data (a task, a schedule, a memory, a mission) so tables and lists are not empty: no violation of impact serious
// or critical; the moderate ones are printed.

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** The page's global once axe-core's source has run in it (the test's tsconfig has no DOM types). */
declare const window: { axe?: { run(): Promise<{ violations: AxeViolation[] }> } };

let rig: WebRig;
let page: Page;

beforeAll(async () => {
  rig = await startWebRig();
  page = rig.page;
  await rig.api.setMemorySettings({ learning_enabled: false });
  rig.server.enqueue({ kind: "reply", text: "Noted: **jasmine** tea." });
  await rig.api.createTask({ message: "My tea of choice is jasmine", wait: true });
  await rig.api.createSchedule({ name: "Water the plants", description: "Water them", interval_secs: 3600 });
  await rig.api.createMemory({ content: "Prefers jasmine tea in the afternoon", kind: "fact" });
  await rig.api.updateMission({ objective: "Keep the garden notes tidy", heartbeat_secs: 600, enabled: false });
  await rig.signIn();
}, 60_000);

afterAll(async () => {
  await rig?.close();
});

/** axe's violations on the page as it is. Added with page.evaluate (a CDP script run), which the page's
 *  Content-Security-Policy does not govern, unlike an inline <script> element; so the scan runs under the real CSP. */
async function scan(): Promise<AxeViolation[]> {
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(AXE_SOURCE);
  return page.evaluate(async () => {
    const result = await window.axe!.run();
    return result.violations.map(({ id, impact, help, nodes }) => ({
      id,
      impact,
      help,
      nodes: nodes.map(({ target }) => ({ target })),
    }));
  });
}

/** One line per violation, naming at most three of the elements it found. */
function describeViolation(v: AxeViolation): string {
  const targets = v.nodes.slice(0, 3).map((node) => node.target.join(" "));
  if (v.nodes.length > 3) targets.push("…");
  return `${v.impact} ${v.id}: ${v.help} (${targets.join(", ")})`;
}

describe("accessibility", () => {
  it("no tab has a serious or critical axe violation", async () => {
    const severe: string[] = [];
    for (const tab of TABS) {
      await page.getByRole("tab", { name: tab.name, exact: true }).click();
      await page.waitForURL(`**${tab.path}`);
      await page.locator("main").waitFor();
      await page.waitForTimeout(500); // the tab's first data (the event stream keeps the network busy)
      const violations = await scan();
      for (const violation of violations) {
        const line = `${tab.name}: ${describeViolation(violation)}`;
        if (violation.impact === "serious" || violation.impact === "critical") severe.push(line);
        else console.log(`axe (not failing): ${line}`);
      }
    }
    expect(severe.join("\n")).toBe("");
    expect(rig.problems.join("\n")).toBe("");
  }, 30_000);
});
