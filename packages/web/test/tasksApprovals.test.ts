import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Task } from "@assistant/client";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { tempDataDir, until } from "../../assistant/test/helpers/daemon.ts";
import { startWebRig, type WebRig } from "./browser.ts";

// The Tasks tab and the approvals review queue in Chromium against a real daemon (test/browser.ts): the scripted
// model calls write_file, which tools_policy.yaml makes wait for approval; the badge of the status strip opens
// the queue, and approving, denying with a note or "always" changes what the daemon records (checked through
// rig.api). The Tasks tab lists, filters and opens tasks, shows their timeline, report, queues and sub-tasks,
// clears a queue and cancels a task.

let rig: WebRig;
let page: Page;
let work: string;

beforeAll(async () => {
  rig = await startWebRig();
  page = rig.page;
  work = tempDataDir("assistant-web-work-");
  // tools_policy.yaml is reloaded on change: writes in `work` are allowed once approved.
  writeFileSync(
    join(rig.daemon.dataDir, "tools_policy.yaml"),
    stringify({ allowed_read_paths: [work], allowed_write_paths: [work], require_approval: ["write_file"] }),
  );
  await rig.signIn();
}, 60_000);

afterAll(async () => {
  await rig?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

const untilStatus = (id: string, ...statuses: Task["status"][]) =>
  until(
    () => rig.api.getTask(id),
    (task) => statuses.includes(task.status),
  );

/**
 * Starts a task whose model asks to write `file`, then answers `reply` (none for a task that will be cancelled,
 * so no scripted answer is left for the next test); resolves once it waits for approval.
 */
async function taskWaitingToWrite(file: string, reply?: string): Promise<string> {
  rig.server.enqueue(
    { kind: "tool_call", name: "write_file", arguments: { path: join(work, file), content: `content of ${file}` } },
    ...(reply ? [{ kind: "reply" as const, text: reply }] : []),
  );
  const started = await rig.api.sendMessage({ message: `Save a note to ${file}` });
  if (!("task_id" in started) || !started.task_id) throw new Error(`no task started: ${JSON.stringify(started)}`);
  expect((await untilStatus(started.task_id, "waiting_approval")).status).toBe("waiting_approval");
  return started.task_id;
}

const badge = () => page.getByTestId("status-approvals").getByRole("button");
const dialog = () => page.getByRole("dialog", { name: "Pending approvals" });

describe("approvals from the status strip", () => {
  it("the badge counts a pending call and opens it; approving lets the task complete", async () => {
    const taskId = await taskWaitingToWrite("todo.txt", "Saved your todo.");
    await badge().getByText("Pending approvals: 1").waitFor({ timeout: 8_000 });
    await badge().click();
    await dialog().getByRole("heading", { name: "write_file" }).waitFor();
    expect(await dialog().textContent()).toContain(join(work, "todo.txt"));
    await dialog().getByRole("button", { name: "Approve" }).click();
    await dialog().getByText("Approved: write_file").waitFor();
    expect(await untilStatus(taskId, "completed")).toMatchObject({ status: "completed", reply: "Saved your todo." });
    expect(readFileSync(join(work, "todo.txt"), "utf8")).toBe("content of todo.txt");
    await dialog().getByText("Nothing waits for your approval.").waitFor();
    await badge().getByText("Pending approvals: 0").waitFor();
    await page.keyboard.press("Escape");
    await dialog().waitFor({ state: "hidden" });
    expect(rig.problems.join("\n")).toBe("");
  });

  it("denying records the note, which reaches the model; the file is not written", async () => {
    const taskId = await taskWaitingToWrite("other.txt", "Understood, I did not write it.");
    await badge().click();
    await dialog().getByRole("heading", { name: "write_file" }).waitFor();
    await dialog().getByLabel("Note (optional)").fill("not in that folder");
    await dialog().getByRole("button", { name: "Deny" }).click();
    await dialog().getByText("Denied: write_file").waitFor();
    const denied = await rig.api.listQueueItems({ status: "denied" });
    expect(denied.items).toContainEqual(
      expect.objectContaining({ tool: "write_file", task_id: taskId, note: "not in that folder" }),
    );
    expect(await untilStatus(taskId, "completed")).toMatchObject({ reply: "Understood, I did not write it." });
    expect(JSON.stringify(rig.server.requests.at(-1)?.body)).toContain("not in that folder");
    expect(existsSync(join(work, "other.txt"))).toBe(false);
    await dialog().getByRole("button", { name: "Close" }).click();
    expect(rig.problems.join("\n")).toBe("");
  });

  it("'always allow this scope' approves and records an allow decision for the tool and scope", async () => {
    const taskId = await taskWaitingToWrite("always.txt", "Written.");
    await badge().click();
    await dialog().getByLabel("Always allow this scope").check();
    await dialog().getByRole("button", { name: "Approve" }).click();
    await dialog()
      .getByText(/Approved: write_file · from now on allowed:/)
      .waitFor();
    await untilStatus(taskId, "completed");
    const decisions = await rig.api.listDecisions();
    expect(decisions.items).toContainEqual(
      expect.objectContaining({ tool: "write_file", effect: "allow", scope: expect.stringContaining("always.txt") }),
    );
    await dialog().getByRole("button", { name: "Close" }).click();
    expect(rig.problems.join("\n")).toBe("");
  });
});

describe("the Tasks tab", () => {
  it("lists tasks with a status filter and opens one: timeline, report, deep link", async () => {
    await page.getByRole("tab", { name: "Tasks" }).click();
    await page.getByRole("heading", { name: "Tasks" }).waitFor();
    await page.getByRole("link", { name: "Save a note to todo.txt" }).waitFor();
    await page.getByLabel("Filter by status").selectOption("cancelled");
    await page.getByText("No task here yet.").waitFor();
    await page.getByLabel("Filter by status").selectOption("completed");
    await page.getByRole("link", { name: "Save a note to other.txt" }).click();
    await page.waitForURL("**/tasks/*");
    const taskId = decodeURIComponent(new URL(page.url()).pathname.split("/")[2]!);
    expect((await rig.api.getTask(taskId)).message).toBe("Save a note to other.txt");
    await page.getByTestId("task-status").getByText("completed").waitFor();
    const timeline = page.getByRole("list", { name: "Timeline" });
    await timeline.getByText("approval denied for write_file: not in that folder").waitFor();
    expect(await timeline.textContent()).toContain("waiting_approval");
    const failedOrDone = page.locator(".task-report");
    await failedOrDone.getByRole("heading", { name: "Done" }).waitFor();
    expect(await failedOrDone.getByRole("heading").allTextContents()).toEqual([
      "Report",
      "Done",
      "Needs review",
      "Failed",
      "Next steps",
    ]);

    // A deep link (or a reload) opens the same detail; "All tasks" goes back to the list.
    await page.goto(`${rig.daemon.url}/tasks/${taskId}`);
    await page.getByRole("heading", { name: /^Task / }).waitFor();
    expect(await page.locator('[role="tab"][aria-selected="true"]').textContent()).toBe("Tasks");
    await page.getByRole("link", { name: "← All tasks" }).click();
    await page.waitForURL("**/tasks");
    await page.getByLabel("Filter by status").waitFor();
    await page.goto(`${rig.daemon.url}/tasks/no-such-task`);
    await page.getByText("No task has this id: no-such-task").waitFor();
    // Leave the missing task's page before forgetting its 404s: a reload still in flight there (a poll, a live
    // event) logs another one, which must not count against the next test.
    await page.goto(`${rig.daemon.url}/tasks`);
    await page.getByLabel("Filter by status").waitFor();
    expect(rig.problems.filter((p) => !p.includes("404")).join("\n")).toBe("");
    rig.problems.length = 0;
  });

  it("shows and clears the steering and follow-up queues, and cancels a running task", async () => {
    const taskId = await taskWaitingToWrite("cancelled.txt");
    const { session_id } = await rig.api.getTask(taskId);
    await rig.api.sendMessage({ message: "Answer in French please", session_id, message_delivery_mode: "steering" });
    await rig.api.sendMessage({ message: "Then summarise", session_id, message_delivery_mode: "follow_up" });
    await page.goto(`${rig.daemon.url}/tasks/${taskId}`);
    await page.getByTestId("task-status").getByText("waiting for approval").waitFor();
    await page.getByRole("list", { name: "Steering" }).getByText("Answer in French please").waitFor();
    await page.getByRole("list", { name: "Follow-up" }).getByText("Then summarise").waitFor();
    await page.getByRole("button", { name: "Clear queues" }).click();
    await page.getByText("Messages cleared: 2").waitFor();
    expect(await rig.api.getTaskQueue(taskId)).toMatchObject({ steering: [], follow_up: [] });
    expect(await page.getByRole("button", { name: "Clear queues" }).isDisabled()).toBe(true);

    await page.getByRole("button", { name: "Cancel task" }).click();
    expect((await untilStatus(taskId, "cancelled")).status).toBe("cancelled");
    await page.getByTestId("task-status").getByText("cancelled").waitFor();
    expect(await page.getByRole("button", { name: "Cancel task" }).count()).toBe(0);
    expect(existsSync(join(work, "cancelled.txt"))).toBe(false);
    expect(rig.problems.join("\n")).toBe("");
  });

  it("shows the sub-task tree of an orchestrated task, each child linking to its detail and back", async () => {
    const plan = JSON.stringify({
      subtasks: [
        { agent: "search", task: "Find the population of Lyon" },
        { agent: "search", task: "Find the population of Nantes" },
      ],
    });
    rig.server.enqueue(
      { kind: "reply", text: plan },
      { kind: "reply", text: "a sub-result" },
      { kind: "reply", text: "another sub-result" },
      { kind: "reply", text: "The synthesis." },
    );
    const parent = await rig.api.createTask({
      message: "Compare Lyon and Nantes",
      task_type: "orchestrator",
      wait: true,
    });
    if (!("status" in parent)) throw new Error("the task did not wait");
    expect(parent.status).toBe("completed");
    const children = (await rig.api.getTaskReport(parent.id)).subtasks;
    expect(children).toHaveLength(2);

    await page.goto(`${rig.daemon.url}/tasks/${parent.id}`);
    const tree = page.getByRole("list", { name: "Sub-tasks" });
    await tree.getByRole("link").first().waitFor();
    expect(await tree.getByRole("link").count()).toBe(2);
    const child = children[0]!.task_id;
    await tree.getByRole("link", { name: new RegExp(child.slice(0, 8)) }).click();
    await page.waitForURL(`**/tasks/${child}`);
    await page.getByRole("link", { name: parent.id.slice(0, 8) }).click();
    await page.waitForURL(`**/tasks/${parent.id}`);
    await page.getByRole("list", { name: "Sub-tasks" }).waitFor();
    expect(rig.problems.join("\n")).toBe("");
  });

  it("speaks French", async () => {
    await page.goto(`${rig.daemon.url}/tasks`);
    await page.getByLabel("Language").selectOption("fr");
    await page.getByRole("heading", { name: "Tâches" }).waitFor();
    await page.getByLabel("Filtrer par statut").selectOption("cancelled");
    expect(await page.getByLabel("Filtrer par statut").locator("option:checked").textContent()).toBe("annulée");
    await page.getByRole("link", { name: "Save a note to cancelled.txt" }).click();
    await page.getByRole("heading", { name: "Chronologie" }).waitFor();
    await page.getByRole("button", { name: "Vider les files" }).waitFor();
    await page.getByTestId("status-approvals").getByRole("button").click();
    await page.getByRole("dialog", { name: "Approbations en attente" }).waitFor();
    await page.getByRole("button", { name: "Fermer" }).click();
    await page.getByLabel("Langue").selectOption("en");
    expect(rig.problems.join("\n")).toBe("");
  });
});
