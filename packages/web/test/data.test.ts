import { readFileSync } from "node:fs";
import { unzipSync } from "fflate";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebRig, type WebRig } from "./browser.ts";

// The Data tab in Chromium against a real daemon (test/browser.ts): the data directory and counts shown, the export
// downloaded by the browser and opened (a session's message in it, never the token or the vault), the vault's key
// names without their values, deleting the history only after typing the word (and refused while a task runs),
// the counts updated, French labels, no console error.

let rig: WebRig;
let page: Page;
const SECRET = "sk-data-tab-secret-never-shown";

beforeAll(async () => {
  rig = await startWebRig();
  page = rig.page;
  await rig.api.setMemorySettings({ learning_enabled: false });
  await rig.api.setVaultSecret({ key: "cloud_a_api_key", value: SECRET });
  rig.server.enqueue({ kind: "reply", text: "Jasmine tea, noted." });
  await rig.api.createTask({ message: "My tea of choice is jasmine", wait: true });
  await rig.signIn();
}, 60_000);

afterAll(async () => {
  await rig?.close();
});

const count = (name: string) => page.getByTestId("data-counts").locator(`dt:text-is("${name}") + dd`).textContent();
/** Chromium logs a refused request as a console error: expected once after a deliberate refusal. */
function expectRefused(status: number) {
  const others = rig.problems.filter((line) => !line.includes(`status of ${status}`));
  expect(rig.problems.length - others.length).toBe(1);
  rig.problems.splice(0, rig.problems.length, ...others);
}

describe("the Data tab", () => {
  it("shows the data directory with sizes, the counts and the vault's key names, never a secret", async () => {
    await page.getByRole("tab", { name: "Data" }).click();
    await page.waitForURL("**/data");
    await expect.poll(() => count("Messages")).toBe("2");
    expect(await count("Sessions")).toBe("1");
    expect(await count("Tasks")).toBe("1");
    expect(await page.getByTestId("data-dir").textContent()).toBe(rig.daemon.dataDir);
    const files = page.getByRole("table", { name: "Data directory" });
    await files.getByRole("row", { name: /assistant\.db \d+(\.\d)? (B|KB|MB)/ }).waitFor();
    await files.getByRole("row", { name: /^reports\/ / }).waitFor();
    await page.getByTestId("vault-keys").getByText("cloud_a_api_key").waitFor();
    const html = await page.content();
    expect(html).not.toContain(SECRET);
    expect(html).not.toContain(rig.daemon.token);
    expect(rig.problems.join("\n")).toBe("");
  });

  it("downloads the export as a zip holding the session's messages, never the token or the vault", async () => {
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Export as zip" }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^assistant-export-\d{4}-\d\d-\d\d\.zip$/);
    const zip = unzipSync(new Uint8Array(readFileSync((await download.path())!)));
    const text = (name: string) => new TextDecoder().decode(zip[name]!);
    const messages = text("messages.jsonl")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line).content);
    expect(messages).toEqual(["My tea of choice is jasmine", "Jasmine tea, noted."]);
    expect(Object.keys(zip).some((name) => name.startsWith("reports/"))).toBe(true);
    const everything = Object.keys(zip).map(text).join("\n");
    expect(everything).not.toContain(rig.daemon.token);
    expect(everything).not.toContain(SECRET);
    expect(Object.keys(zip).some((name) => /vault|auth_token/.test(name))).toBe(false);
    await page
      .getByRole("status")
      .getByText(/^Export downloaded \(\d/)
      .waitFor();
    expect(rig.problems.join("\n")).toBe("");
  });

  it("deletes the history only once `delete` is typed, not while a task runs, and the counts follow", async () => {
    const button = page.getByRole("button", { name: "Delete history" });
    const confirm = page.getByLabel("Type delete to confirm");
    expect(await button.isDisabled()).toBe(true);
    await confirm.fill("remove");
    expect(await button.isDisabled()).toBe(true);

    // A task still running: the daemon refuses, the page says why and nothing is deleted.
    rig.server.enqueue({ kind: "hang" });
    const running = await rig.api.sendMessage({ message: "Think for a long time" });
    const taskId = (running as { task_id: string }).task_id;
    await expect.poll(async () => (await rig.api.getTask(taskId)).status).toBe("running");
    await confirm.fill("delete");
    await button.click();
    await page
      .getByRole("alert")
      .getByText(/1 task is still queued, running or waiting for approval/)
      .waitFor();
    expectRefused(409);
    expect((await rig.api.getDataOverview()).counts.tasks).toBe(2);
    await rig.api.cancelTask(taskId);
    await expect.poll(async () => (await rig.api.getTask(taskId)).status).toBe("cancelled");

    await confirm.fill("delete");
    await button.click();
    await page
      .getByRole("status")
      .getByText(/^History deleted: 2 sessions, \d+ messages, 2 tasks/)
      .waitFor();
    expect((await rig.api.getDataOverview()).counts).toMatchObject({ sessions: 0, messages: 0, tasks: 0 });
    await expect.poll(() => count("Messages")).toBe("0");
    expect(await count("Tasks")).toBe("0");
    // The vault and its key names stay.
    expect((await rig.api.listVaultKeys()).items).toEqual([{ key: "cloud_a_api_key" }]);
    await page.getByTestId("vault-keys").getByText("cloud_a_api_key").waitFor();
    expect(rig.problems.join("\n")).toBe("");
  });

  it("speaks French", async () => {
    await page.getByLabel("Language").selectOption("fr");
    await page.getByRole("heading", { name: "Données", exact: true }).waitFor();
    await page.getByRole("heading", { name: "Clés du coffre" }).waitFor();
    await page.getByRole("button", { name: "Exporter en zip" }).waitFor();
    const button = page.getByRole("button", { name: "Supprimer l'historique" });
    await page.getByLabel("Tapez supprimer pour confirmer").fill("delete");
    expect(await button.isDisabled()).toBe(true);
    await page.getByLabel("Tapez supprimer pour confirmer").fill("supprimer");
    expect(await button.isDisabled()).toBe(false);
    expect(await count("Tâches")).toBe("0");
    await page.getByLabel("Langue").selectOption("en");
    expect(rig.problems.join("\n")).toBe("");
  });
});
