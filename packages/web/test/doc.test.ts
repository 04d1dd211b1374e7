import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebRig, type WebRig } from "./browser.ts";

// The Doc tab in Chromium against a real daemon (test/browser.ts) started from a folder holding docs/ and with an
// ASSISTANT_SPEC_DIR: the files and their titles as the daemon lists them, a doc rendered with its headings as
// contents, links between docs and to headings opening in the tab (back button, deep links), search by the
// daemon, hostile Markdown staying text, the empty state, French labels, no console error.

// What the page's globals look like inside page.evaluate (this file is type-checked without the DOM's types).
declare const window: { __pwned?: number };
declare const document: { activeElement: { id: string } | null };

let rig: WebRig;
let page: Page;
let work: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "assistant-webdocs-"));
  mkdirSync(join(work, "docs", "guides"), { recursive: true });
  writeFileSync(
    join(work, "docs", "index.md"),
    [
      "# Welcome",
      "",
      "Read [how to set up](guides/setup.md#boiling-water), the [panel](#panel) below, or [a file](../outside.md).",
      "",
      '<script>window.__pwned = 1</script> <img src=x onerror="window.__pwned = 2"> [bad](javascript:window.__pwned=3)',
      "",
      "## Panel",
      "",
      "The panel heading takes the anchor #panel without clashing with the app's own panel.",
      "",
    ].join("\n"),
  );
  writeFileSync(
    join(work, "docs", "guides", "setup.md"),
    [
      "# Setting up",
      "",
      "Fill the kettle.",
      "",
      "## Boiling water",
      "",
      `${"Wait for the kettle to boil. ".repeat(80)}`,
      "",
      "Back to [the start](../index.md).",
      "",
    ].join("\n"),
  );
  mkdirSync(join(work, "spec"));
  writeFileSync(join(work, "spec", "api.md"), "# API spec\n\nThe kettle API.\n");
  process.env.ASSISTANT_SPEC_DIR = join(work, "spec"); // the daemon inherits the environment
  try {
    rig = await startWebRig({ cwd: work });
  } finally {
    delete process.env.ASSISTANT_SPEC_DIR;
  }
  page = rig.page;
  await rig.signIn();
}, 60_000);

afterAll(async () => {
  await rig?.close();
  rmSync(work, { recursive: true, force: true });
});

const article = () => page.getByTestId("doc-article");
const files = () => page.getByRole("list", { name: "Files" });
/** Chromium logs each refused request once ("… status of 404"): expected after a deliberate bad request. */
function expectRefused(status: number) {
  const others = rig.problems.filter((line) => !line.includes(`status of ${status}`));
  expect(rig.problems.length - others.length).toBe(1);
  rig.problems.splice(0, rig.problems.length, ...others);
}

describe("the Doc tab", () => {
  it("lists the daemon's docs, renders one with its contents, and keeps hostile Markdown as text", async () => {
    const listed = await rig.api.listDocs();
    expect(listed.items.map((item) => item.path)).toEqual(["guides/setup.md", "index.md", "@spec/api.md"]);
    await page.getByRole("tab", { name: "Doc" }).click();
    await page.waitForURL("**/doc");
    for (const item of listed.items) await files().getByRole("link", { name: item.title, exact: true }).waitFor();
    // index.md opens first; its headings are the contents.
    await article().getByRole("heading", { name: "Welcome" }).waitFor();
    const contents = page.getByRole("list", { name: "On this page" });
    expect(await contents.getByRole("link").allTextContents()).toEqual(["Welcome", "Panel"]);
    expect(await files().getByRole("link", { name: "Welcome" }).getAttribute("aria-current")).toBe("page");

    await article().getByText("<script>window.__pwned = 1</script>", { exact: false }).waitFor();
    expect(await page.evaluate(() => window.__pwned)).toBeUndefined();
    expect(await article().locator("script, img").count()).toBe(0);
    // A file outside docs/ is not a link the tab could open.
    expect(await article().getByText("a file", { exact: true }).getAttribute("href")).toBeNull();
  });

  it("opens links between docs and to headings inside the tab, with the back button and deep links", async () => {
    await article().getByRole("link", { name: "how to set up" }).click();
    await page.waitForURL(/\/doc\?file=guides%2Fsetup\.md#boiling-water$/);
    const boiling = article().getByRole("heading", { name: "Boiling water" });
    await boiling.waitFor();
    await expect.poll(() => boiling.evaluate((h) => h === (document.activeElement as unknown))).toBe(true);
    expect(await boiling.getAttribute("id")).toBe("doc-boiling-water");
    expect(await page.getByRole("list", { name: "On this page" }).getByRole("link").allTextContents()).toEqual([
      "Setting up",
      "Boiling water",
    ]);

    // A relative link back up, then the browser's back button.
    await article().getByRole("link", { name: "the start" }).click();
    await article().getByRole("heading", { name: "Welcome" }).waitFor();
    await page.goBack();
    await article().getByRole("heading", { name: "Setting up" }).waitFor();
    await page.goBack();
    await article().getByRole("heading", { name: "Welcome" }).waitFor();

    // A heading of the same doc, from the text and from the contents.
    await article().getByRole("link", { name: "panel" }).click();
    await page.waitForURL(/#panel$/);
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe("doc-panel");
    expect(await page.locator("main#panel").count()).toBe(1);

    // Keyboard: Enter on a file of the list opens it.
    await files().getByRole("link", { name: "API spec" }).focus();
    await page.keyboard.press("Enter");
    await article().getByText("The kettle API.").waitFor();
    // A deep link (a reload) opens the same doc, a spec file included.
    await page.reload();
    await article().getByText("The kettle API.").waitFor();
    expect(new URL(page.url()).searchParams.get("file")).toBe("@spec/api.md");
  });

  it("searches across the docs through the daemon", async () => {
    const search = page.getByRole("search");
    await search.getByLabel("Search the docs").fill("kettle");
    await search.getByRole("button", { name: "Search", exact: true }).click();
    const results = page.getByRole("list", { name: "Docs found" });
    await results.getByRole("link").first().waitFor();
    expect(await results.getByRole("link").allTextContents()).toEqual(["Setting up", "API spec"]);
    expect(await results.locator("li").first().textContent()).toContain("81 matches");
    await results.getByRole("link", { name: "Setting up" }).click();
    await article().getByRole("heading", { name: "Setting up" }).waitFor();

    await search.getByLabel("Search the docs").fill("teapot");
    await search.getByRole("button", { name: "Search", exact: true }).click();
    await results.getByText("No doc holds every word.").waitFor();
    // Too long a query: the daemon's refusal, in the page.
    await search.getByLabel("Search the docs").fill("k".repeat(201));
    await search.getByRole("button", { name: "Search", exact: true }).click();
    await search
      .getByRole("alert")
      .getByText(/query\.q/)
      .waitFor();
    expectRefused(400);
    await search.getByRole("button", { name: "Clear search" }).click();
    await results.waitFor({ state: "detached" });
  });

  it("says when a doc does not exist", async () => {
    await page.goto(`${rig.daemon.url}/doc?file=missing.md`);
    await page.getByRole("alert").getByText("No doc at missing.md: pick one in the list.").waitFor();
    expectRefused(404);
  });

  it("says to start the daemon from the folder holding docs/ when it has none", async () => {
    // The daemon of this test has docs; its answer for a daemon without any (checked in
    // packages/assistant/test/docs/docsApi.test.ts) is what the page gets here.
    await page.route("**/api/docs", (route) =>
      route.fulfill({ json: { working_directory: "/home/someone", folders: [], items: [] } }),
    );
    await page.goto(`${rig.daemon.url}/doc`);
    await page.getByRole("status").getByText("Start the daemon from the folder that holds docs/").waitFor();
    await page.getByText("/home/someone/docs").waitFor();
    await page.unroute("**/api/docs");
  });

  it("speaks French, with no console error", async () => {
    await page.goto(`${rig.daemon.url}/doc`);
    await page.getByRole("combobox", { name: "Language" }).selectOption("fr");
    await page.getByRole("heading", { name: "Fichiers" }).waitFor();
    await page.getByRole("search").getByLabel("Chercher dans la documentation").fill("kettle");
    await page.getByRole("search").getByRole("button", { name: "Chercher", exact: true }).click();
    await page.getByRole("list", { name: "Documents trouvés" }).getByText("81 occurrences").waitFor();
    await page.getByRole("heading", { name: "Sur cette page" }).waitFor();
    expect(rig.problems).toEqual([]);
  });
});
