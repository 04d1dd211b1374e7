import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebRig, type WebRig } from "./browser.ts";

// The Calendar tab in Chromium against a real daemon (test/browser.ts): schedules, the mission heartbeat and
// completed tasks set up through the API show up in the month, week and list views, each entry opens its task or
// schedule, previous / next / today work by keyboard, a bad date gets a message, French labels, no console error.

let rig: WebRig;
let page: Page;
let taskIds: string[] = [];

beforeAll(async () => {
  rig = await startWebRig();
  page = rig.page;
  await rig.api.createSchedule({ name: "Water the plants", description: "Water them", interval_secs: 3600 });
  await rig.api.createSchedule({ name: "Morning digest", description: "Digest", cron: "0 9 * * *" });
  await rig.api.updateMission({ objective: "Keep notes tidy", heartbeat_secs: 600, enabled: true });
  // Four completed tasks today: more than a month cell shows, so "+N more" appears.
  taskIds = [];
  for (const message of ["Plan the garden", "Buy seeds", "Call the plumber", "Read the manual"]) {
    const answer = await rig.api.sendMessage({ message, wait: true });
    taskIds.push((answer as { task_id: string }).task_id);
  }
  await rig.signIn();
}, 60_000);

afterAll(async () => {
  await rig?.api.updateMission({ enabled: false }).catch(() => undefined);
  await rig?.close();
});

const monthTitle = (date: Date, locale = "en") =>
  new Intl.DateTimeFormat(locale, { month: "long", year: "numeric" }).format(date);
const rangeTitle = () => page.locator(".cal-range").textContent();
const month = () => page.getByRole("table", { name: "Month" });

describe("the Calendar tab", () => {
  it("shows past tasks and future fires by month, week and list, each opening its task or schedule", async () => {
    const done = await rig.api.getTask(taskIds[0]!);
    expect(done.status).toBe("completed");
    await page.getByRole("tab", { name: "Calendar" }).click();
    await page.waitForURL("**/calendar");
    await page.getByRole("heading", { name: "Calendar", exact: true }).waitFor();
    expect(await rangeTitle()).toBe(monthTitle(new Date()));

    // Today's cell: the tasks (3 shown, "+N more" for the rest), marked as the current date.
    const today = month().locator('td[aria-current="date"]');
    await today.getByRole("link", { name: /task: Plan the garden \(completed\)/ }).waitFor();
    expect(await today.getByRole("link").count()).toBe(3);
    await today.getByRole("button", { name: /^\+\d+ more$/ }).waitFor();

    // Every entry opens what it is about: a task its detail, a schedule the Scheduled tab.
    const task = today.getByRole("link", { name: /Plan the garden/ });
    expect(await task.getAttribute("href")).toBe(`/tasks/${taskIds[0]}`);
    await task.click();
    await page.waitForURL(`**/tasks/${taskIds[0]}`);
    await page.goBack();
    await page.waitForURL("**/calendar");

    // "+N more" opens the week of that day, where every entry of the day is listed.
    await month().locator('td[aria-current="date"]').getByRole("button", { name: /more/ }).click();
    const week = page.getByRole("list", { name: "Week" });
    const day = week.locator('li[aria-current="date"]');
    for (const title of ["Plan the garden", "Buy seeds", "Call the plumber", "Read the manual"]) {
      await day.getByRole("link", { name: new RegExp(`task: ${title} \\(completed\\)`) }).waitFor();
    }
    expect(await page.getByRole("button", { name: "Week", exact: true }).getAttribute("aria-pressed")).toBe("true");
    // Future fires of this week: the hourly schedule and the mission heartbeat (in 10 minutes), with their links.
    const water = week.getByRole("link", { name: /schedule: Water the plants \(upcoming\)/ }).first();
    await water.waitFor();
    const beat = week.getByRole("link", { name: /mission: Mission heartbeat \(upcoming\)/ }).first();
    expect(await beat.getAttribute("href")).toBe("/mission");
    await water.click();
    await page.waitForURL("**/scheduled");
    await page.getByRole("tab", { name: "Calendar" }).click();
    await page.waitForURL("**/calendar");

    // The list view: only days with entries, with kind and status in words.
    await page.getByRole("button", { name: "List", exact: true }).click();
    const todayList = page.getByRole("region", { name: /\(Today\)$/ });
    await todayList.getByText("task · completed").first().waitFor();
    expect(await todayList.getByRole("link", { name: /Buy seeds/ }).getAttribute("href")).toBe(`/tasks/${taskIds[1]}`);
    expect(rig.problems.join("\n")).toBe("");
  });

  it("moves by keyboard: Page Down and Page Up by a month or a week, Home back to today", async () => {
    await page.getByRole("button", { name: "Month", exact: true }).click();
    const now = new Date();
    const next = new Date(now.getFullYear(), now.getMonth() + 1, 1);
    const previous = new Date(now.getFullYear(), now.getMonth() - 1, 1);
    await page.getByRole("button", { name: "Next month" }).focus();
    await page.keyboard.press("PageDown");
    await expect.poll(rangeTitle).toBe(monthTitle(next));
    // The next month has the daily cron at 09:00 on every day after today (in the daemon's zone, the page's).
    await month()
      .getByRole("link", { name: /schedule: Morning digest/ })
      .first()
      .waitFor();
    await page.keyboard.press("Home");
    await expect.poll(rangeTitle).toBe(monthTitle(now));
    await page.keyboard.press("PageUp");
    await expect.poll(rangeTitle).toBe(monthTitle(previous));
    // A month before anything existed has no entry; the buttons do what the keys do.
    expect(await month().getByRole("link").count()).toBe(0);
    await page.getByRole("button", { name: "Today" }).click();
    await expect.poll(rangeTitle).toBe(monthTitle(now));
    await page.getByRole("button", { name: "Week", exact: true }).click();
    const weekTitle = await rangeTitle();
    await page.getByRole("button", { name: "Next week" }).click();
    await expect.poll(rangeTitle).not.toBe(weekTitle);
    await page.getByRole("button", { name: "Previous week" }).press("Home");
    await expect.poll(rangeTitle).toBe(weekTitle);
    expect(rig.problems.join("\n")).toBe("");
  });

  it("refuses an empty date and goes to a chosen one", async () => {
    await page.getByRole("button", { name: "Month", exact: true }).click();
    await page.getByRole("button", { name: "Go", exact: true }).click();
    await page.getByRole("alert").getByText("Choose a date to go to.").waitFor();
    expect(await page.getByLabel("Go to date").getAttribute("aria-invalid")).toBe("true");
    await page.getByLabel("Go to date").fill("2020-01-15");
    await page.getByRole("button", { name: "Go", exact: true }).click();
    await expect.poll(rangeTitle).toBe("January 2020");
    await page.getByRole("button", { name: "List", exact: true }).click();
    await page.getByText("Nothing in this range: no run and no schedule or heartbeat due.").waitFor();
    expect(await page.getByRole("alert").count()).toBe(0);
    expect(rig.problems.join("\n")).toBe("");
  });

  it("speaks French", async () => {
    await page.getByLabel("Language").selectOption("fr");
    await page.getByRole("heading", { name: "Calendrier", exact: true }).waitFor();
    await page.getByRole("button", { name: "Aujourd'hui" }).click();
    await page.getByRole("button", { name: "Mois", exact: true }).click();
    await page.getByRole("button", { name: "Mois suivant" }).waitFor();
    await page
      .getByRole("table", { name: "Mois" })
      .getByRole("link", { name: /tâche: Plan the garden/ })
      .first()
      .waitFor();
    expect(await rangeTitle()).toBe(monthTitle(new Date(), "fr"));
    await page.getByLabel("Langue").selectOption("en");
    expect(rig.problems.join("\n")).toBe("");
  });
});
