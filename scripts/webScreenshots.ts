// Screenshots of the web UI's ten tabs for docs/web-ui.md: `node scripts/node22.mjs scripts/webScreenshots.ts`
// (after `npm run build`). The same rig as the browser tests (packages/web/test/browser.ts): Debian's Chromium
// against a real daemon and the scripted model server, signed in by a one-time code, with a little data made
// through the API (a chat, a task, a schedule, a memory, a mission) so the tabs are not empty. Writes
// one image per tab into docs/images/ (web-chat.png, …; a .jpg when the PNG is over 150 KB) at 1280x800, light theme.

import { mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TABS } from "../packages/web/src/tabs.ts";
import { startWebRig } from "../packages/web/test/browser.ts";

const OUT = join(import.meta.dirname, "..", "docs", "images");
const MAX_BYTES = 150 * 1024;

const rig = await startWebRig();
try {
  const { page, api, server } = rig;
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.emulateMedia({ colorScheme: "light" });
  await api.setMemorySettings({ learning_enabled: false });
  server.enqueue({ kind: "reply", text: "Watering every hour is set up. The garden notes are in `notes/garden.md`." });
  await api.createTask({ message: "Remind me to water the plants every hour", wait: true });
  await api.createSchedule({ name: "Water the plants", description: "Remind me to water them", interval_secs: 3600 });
  await api.createSchedule({ name: "Morning digest", description: "Summarise my inbox", cron: "0 8 * * *" });
  await api.createMemory({ content: "Prefers jasmine tea in the afternoon", kind: "preference", subject: "tea" });
  await api.createMemory({ content: "The cat is called Miso", kind: "fact", subject: "cat" });
  await api.updateMission({ objective: "Keep the garden notes tidy", heartbeat_secs: 3600, enabled: false });
  await rig.signIn();

  // The Chat tab with a streamed answer holding a code block.
  server.enqueue({
    kind: "reply",
    text: "A schedule that runs every hour:\n\n```sh\nassistant schedule add --every 1h 'Water the plants'\n```\n\nIt shows in the **Scheduled** and **Calendar** tabs.",
  });
  await page.getByLabel("Message").fill("How do I get reminded every hour?");
  await page.getByLabel("Message").press("Enter");
  await page.getByText("It shows in the").waitFor();

  mkdirSync(OUT, { recursive: true });
  for (const tab of TABS) {
    await page.getByRole("tab", { name: tab.name, exact: true }).click();
    await page.waitForURL(`**${tab.path}`);
    await page.waitForTimeout(700); // the tab's first data (the event stream keeps the network busy)
    await page.mouse.move(0, 0); // no hover state in the picture
    // PNG unless that is heavier than 150 KB (the Doc tab's page of text), then JPEG at quality 80.
    const png = await page.screenshot({ type: "png" });
    const jpeg = png.length > MAX_BYTES;
    const file = join(OUT, `web-${tab.id}.${jpeg ? "jpg" : "png"}`);
    rmSync(join(OUT, `web-${tab.id}.${jpeg ? "png" : "jpg"}`), { force: true });
    writeFileSync(file, jpeg ? await page.screenshot({ type: "jpeg", quality: 80 }) : png);
    console.log(`${file} ${Math.round(statSync(file).size / 1024)} KB`);
  }
  if (rig.problems.length > 0) throw new Error(`the page logged errors:\n${rig.problems.join("\n")}`);
} finally {
  await rig.close();
}
