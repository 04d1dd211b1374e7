import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebRig, type WebRig } from "./browser.ts";

// The Scheduled and Mission tabs in Chromium against a real daemon (test/browser.ts): data made through the API
// shows up, each action changes the daemon's state (checked through the API), bad input says why next to its
// field, French labels, no console error.

let rig: WebRig;
let page: Page;

beforeAll(async () => {
  // Schedules that fire every second, so a run shows in the history within the test (the daemon inherits env).
  process.env.ASSISTANT_SCHEDULE_MIN_INTERVAL_SECS = "1";
  try {
    rig = await startWebRig();
  } finally {
    delete process.env.ASSISTANT_SCHEDULE_MIN_INTERVAL_SECS;
  }
  page = rig.page;
  await rig.signIn();
}, 60_000);

afterAll(async () => {
  await rig?.close();
});

/** The browser logs each refused request (a 400 the test asked for); anything else there is a real problem. */
function expectOneRefusal() {
  expect(rig.problems).toHaveLength(1);
  expect(rig.problems[0]).toMatch(
    /^console: Failed to load resource: the server responded with a status of 400 \(Bad Request\) \(http:\/\/127\.0\.0\.1:\d+\/api\//,
  );
  rig.problems.length = 0;
}

const scheduleItem = (name: string) => page.getByRole("listitem", { name, exact: true });

describe("the Scheduled tab", () => {
  it("lists schedules with their next run, creates by interval, pauses, resumes and deletes after confirming", async () => {
    const made = await rig.api.createSchedule({ name: "Morning digest", description: "Summarise", cron: "0 8 * * *" });
    await page.getByRole("tab", { name: "Scheduled" }).click();
    await page.waitForURL("**/scheduled");
    const existing = scheduleItem("Morning digest");
    await existing.getByText("cron 0 8 * * *").waitFor();
    const shown = Date.parse(made.next_run_at);
    expect(await existing.getByTestId("sched-next").textContent()).toContain(String(new Date(shown).getFullYear()));

    // A typed interval is read by the CLI's parser: a wrong form says which forms work and creates nothing.
    await page.getByLabel("Name").fill("Inbox sweep");
    await page.getByLabel("Message sent at each run").fill("Sweep the inbox");
    await page.getByLabel("Interval", { exact: true }).fill("90 minutes");
    await page.getByText("The interval must be seconds (3600) or a duration such as 90s").waitFor();
    await page.getByRole("button", { name: "Create schedule" }).click();
    expect((await rig.api.listSchedules()).items).toHaveLength(1);
    await page.getByLabel("Interval", { exact: true }).fill("1h30m");
    await page.getByText("every 1h30m (5400 s)").waitFor();
    await page.getByRole("button", { name: "Create schedule" }).click();
    await scheduleItem("Inbox sweep").waitFor();
    const sweep = (await rig.api.listSchedules()).items.find((s) => s.name === "Inbox sweep")!;
    expect(sweep).toMatchObject({ interval_secs: 5400, description: "Sweep the inbox", status: "active" });

    // What the daemon refuses is said next to its field.
    await page.getByLabel("Name").fill("Typo");
    await page.getByLabel("Message sent at each run").fill("x");
    await page.getByLabel("Task type (optional)").fill("conversaton");
    await page.getByRole("button", { name: "Create schedule" }).click();
    await page.locator("#sched-task_type-error").getByText('unknown task type "conversaton"').waitFor();
    expect(await page.getByLabel("Task type (optional)").getAttribute("aria-invalid")).toBe("true");
    expectOneRefusal();
    await page.getByLabel("Task type (optional)").fill("");

    const item = scheduleItem("Inbox sweep");
    await item.getByRole("button", { name: "Pause Inbox sweep" }).click();
    await item.getByText("paused", { exact: true }).waitFor();
    expect((await rig.api.getSchedule(sweep.id)).status).toBe("paused");
    await item.getByRole("button", { name: "Resume Inbox sweep" }).click();
    await item.getByText("active", { exact: true }).waitFor();
    expect((await rig.api.getSchedule(sweep.id)).status).toBe("active");

    // Delete asks first: Cancel keeps it, "Yes, delete" removes it.
    await item.getByRole("button", { name: "Delete Inbox sweep" }).click();
    await item.getByRole("button", { name: "Cancel" }).click();
    expect((await rig.api.getSchedule(sweep.id)).id).toBe(sweep.id);
    await item.getByRole("button", { name: "Delete Inbox sweep" }).click();
    await item.getByText("Delete the schedule “Inbox sweep”?").waitFor();
    await item.getByRole("button", { name: "Yes, delete" }).click();
    await item.waitFor({ state: "detached" });
    expect((await rig.api.listSchedules()).items.map((s) => s.name)).toEqual(["Morning digest"]);
    await rig.api.deleteSchedule(made.id);
    expect(rig.problems).toEqual([]);
  });

  it("previews the next runs of a cron expression and explains a bad one before sending it", async () => {
    await page.getByLabel("Cron expression").check();
    await page.getByLabel("Cron (minute hour day month weekday)").fill("30 9 * * mon-fri");
    const preview = page.locator("#sched-cron-preview li");
    await preview.nth(4).waitFor();
    expect(await preview.count()).toBe(5);
    expect(await preview.first().textContent()).toContain("9:30");
    await page.getByLabel("Cron (minute hour day month weekday)").fill("61 * * * *");
    await page.getByText("minute 61 is out of range 0-59").waitFor();
    await page.getByLabel("Name").fill("Never");
    await page.getByLabel("Message sent at each run").fill("x");
    await page.getByRole("button", { name: "Create schedule" }).click();
    expect((await rig.api.listSchedules()).items).toEqual([]);

    await page.getByLabel("Cron (minute hour day month weekday)").fill("*/5 * * * *");
    await page.getByLabel("Time zone (optional)").fill("Europe/Paris");
    await page.getByRole("button", { name: "Create schedule" }).click();
    await scheduleItem("Never").waitFor();
    const [created] = (await rig.api.listSchedules()).items;
    expect(created).toMatchObject({ cron: "*/5 * * * *", timezone: "Europe/Paris" });
    await rig.api.deleteSchedule(created!.id);
    expect(rig.problems).toEqual([]);
  });

  it("shows the runs a schedule created", async () => {
    const every = await rig.api.createSchedule({ name: "Ticker", description: "Say tick", interval_secs: 1 });
    await scheduleItem("Ticker").waitFor();
    await expect.poll(async () => (await rig.api.getSchedule(every.id)).runs, { timeout: 10_000 }).toBeGreaterThan(0);
    await rig.api.pauseSchedule(every.id);
    const item = scheduleItem("Ticker");
    await item.getByRole("button", { name: "History Ticker" }).click();
    const runs = item.getByRole("region", { name: "Runs of Ticker" });
    await runs.getByRole("cell", { name: "completed" }).first().waitFor({ timeout: 10_000 });
    const [task] = (await rig.api.listTasks({ session_id: every.session_id })).items;
    expect(await runs.getByRole("link").first().getAttribute("href")).toBe(`/tasks/${task!.id}`);
    await rig.api.deleteSchedule(every.id);
    expect(rig.problems).toEqual([]);
  });
});

describe("the Mission tab", () => {
  it("edits the mission through its PUT, with the daemon's refusal next to the field", async () => {
    await page.getByRole("tab", { name: "Mission" }).click();
    await page.waitForURL("**/mission");
    await page.getByTestId("mission-status").getByText("idle").waitFor();
    await page.getByLabel("Objective").fill("Keep the notes tidy");
    await page.getByLabel("Heartbeat").fill("2h");
    await page.getByText("every 2h (7200 s)").waitFor();
    await page.getByLabel("Preferred task type").fill("conversaton");
    await page.getByRole("button", { name: "Save mission" }).click();
    const problem = page.locator("#mission-heartbeat_preferred_task_type-error");
    await problem.getByText('did you mean "conversation"').waitFor();
    expect((await rig.api.getMission()).objective).not.toBe("Keep the notes tidy"); // refused whole: nothing written
    expectOneRefusal();

    await page.getByLabel("Preferred task type").fill("conversation");
    await page.getByLabel("Heartbeat").fill("soon");
    await page.getByRole("button", { name: "Save mission" }).click();
    await page.getByText("The heartbeat must be seconds (3600)").waitFor();
    await page.getByLabel("Heartbeat").fill("1h30m");
    await page.getByRole("button", { name: "Save mission" }).click();
    await page.getByRole("status").getByText("Saved").waitFor();
    expect(await rig.api.getMission()).toMatchObject({
      objective: "Keep the notes tidy",
      heartbeat_secs: 5400,
      heartbeat_preferred_task_type: "conversation",
    });
    await page.getByText("mission_updated").first().waitFor();
    expect(rig.problems).toEqual([]);
  });

  it("pauses and resumes, and shows the report of a finished cycle", async () => {
    await page.getByRole("button", { name: "Pause mission" }).click();
    await page.getByTestId("mission-status").getByText("paused").waitFor();
    expect((await rig.api.getMission()).status).toBe("paused");
    await page.getByRole("button", { name: "Resume mission" }).click();
    await page.getByRole("button", { name: "Pause mission" }).waitFor();
    expect((await rig.api.getMission()).status).not.toBe("paused");

    rig.server.enqueue({ kind: "reply", text: "Tidied **three** notes. <script>window.x=1</script>" });
    await rig.api.updateMission({ heartbeat_secs: 1, enabled: true });
    await page.getByText("cycle 1 ·").waitFor({ timeout: 15_000 });
    await rig.api.updateMission({ enabled: false });
    await page.getByRole("button", { name: "Show report cycle 1" }).click();
    const report = page.locator(".mission-report");
    await report.locator(".answer").getByText("Tidied").waitFor();
    expect(await report.locator(".answer strong").textContent()).toBe("three");
    await report.getByRole("heading", { name: "Done" }).waitFor();
    expect(await report.locator("script").count()).toBe(0);
    expect(await report.textContent()).toContain("<script>");
    expect(rig.problems).toEqual([]);
  });

  it("shows French labels in French", async () => {
    await page.getByLabel("Language").selectOption("fr");
    await page.getByRole("heading", { name: "Réglages de la mission" }).waitFor();
    await page.getByLabel("Dossier des rapports").waitFor();
    await page.getByRole("button", { name: "Enregistrer la mission" }).waitFor();
    await page.getByRole("tab", { name: "Scheduled" }).click();
    await page.getByRole("heading", { name: "Nouvelle planification" }).waitFor();
    await page.getByLabel("Message envoyé à chaque exécution").waitFor();
    await page.getByLabel("Intervalle", { exact: true }).fill("abc");
    await page.getByText("L'intervalle doit être un nombre de secondes").waitFor();
    await page.getByLabel("Langue").selectOption("en");
    expect(rig.problems).toEqual([]);
  });
});
