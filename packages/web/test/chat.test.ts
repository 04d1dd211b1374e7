import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Task } from "@assistant/client";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { tempDataDir, until } from "../../assistant/test/helpers/daemon.ts";
import { startWebRig, type WebRig } from "./browser.ts";

// The Chat tab in Chromium against a real daemon (test/browser.ts): streamed answers with their tool calls folded,
// a write_file approved inline (tools_policy.yaml asks for it), steering that reaches the model's next request,
// cancel, the sessions list, slash command completion and copy buttons; and the shell's fixes (a tab's root view
// from a sub-path, the status strip live from the event stream).

let rig: WebRig;
let page: Page;
let work: string;

beforeAll(async () => {
  rig = await startWebRig();
  page = rig.page;
  work = tempDataDir("assistant-web-chat-");
  writeFileSync(join(work, "notes.md"), "buy oat milk");
  writeFileSync(
    join(rig.daemon.dataDir, "tools_policy.yaml"),
    stringify({ allowed_read_paths: [work], allowed_write_paths: [work], require_approval: ["write_file"] }),
  );
  await rig.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: rig.daemon.url });
  await rig.signIn();
}, 60_000);

afterAll(async () => {
  await rig?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

const conversation = () => page.getByRole("list", { name: "Conversation" });
const lastAnswer = () => page.locator(".turn-assistant").last();
const message = () => page.getByLabel("Message");

async function say(text: string) {
  await message().fill(text);
  await message().press("Enter");
}

const latestTask = async (): Promise<Task> => (await rig.api.listTasks({ limit: 1 })).items[0]!;
const untilStatus = (id: string, ...statuses: Task["status"][]) =>
  until(
    () => rig.api.getTask(id),
    (task) => statuses.includes(task.status),
  );

let firstSession: string;

describe("the Chat tab", () => {
  it("streams an answer with its tool call folded and expandable, and copy buttons", async () => {
    rig.server.enqueue(
      { kind: "tool_call", name: "read_file", arguments: { path: join(work, "notes.md") } },
      { kind: "reply", text: ["Your note says:\n\n", "```\nbuy oat milk\n```\n"] },
    );
    await say("Read my notes");
    const answer = lastAnswer();
    await answer.getByText("Your note says:").waitFor();
    const tools = answer.locator("details.tool-calls");
    await tools.getByText("Tool calls: 1").waitFor();
    // Folded: the call's result is not shown until opened.
    expect(await tools.getByText("buy oat milk").isVisible()).toBe(false);
    await tools.getByText("Tool calls: 1").click();
    await tools.getByText("read_file · ok").click();
    await tools.locator("pre").getByText("buy oat milk").waitFor();
    expect(await tools.textContent()).toContain(join(work, "notes.md"));

    await answer.getByRole("button", { name: "Copy the answer" }).waitFor();
    await answer.getByRole("button", { name: "Copy the code" }).click();
    await answer.getByText("Copied").waitFor();
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe("buy oat milk\n");
    firstSession = (await latestTask()).session_id;
    expect(await page.locator(".chat-bar code").textContent()).toBe(firstSession);
    expect(rig.problems.join("\n")).toBe("");
  });

  it("a write_file waiting for approval is approved inline, and the task writes its file", async () => {
    const file = join(work, "todo.txt");
    rig.server.enqueue(
      { kind: "tool_call", name: "write_file", arguments: { path: file, content: "call the plumber" } },
      { kind: "reply", text: "Saved your todo." },
    );
    await say("Save my todo");
    const answer = lastAnswer();
    await answer.getByRole("heading", { name: "write_file" }).waitFor({ timeout: 8_000 });
    expect(await answer.textContent()).toContain(file);
    await answer.getByRole("button", { name: "Approve" }).click();
    await answer.getByText("Approved: write_file").waitFor();
    await answer.getByText("Saved your todo.").waitFor();
    expect(readFileSync(file, "utf8")).toBe("call the plumber");
    expect((await latestTask()).status).toBe("completed");
    // The status strip heard the approval come and go on the event stream (it polls only every 30 s).
    await page.getByTestId("status-approvals").getByText("Pending approvals: 0").waitFor();
    expect(rig.problems.join("\n")).toBe("");
  });

  it("steering typed while the answer streams reaches the model's next request", async () => {
    rig.server.enqueue(
      { kind: "reply", text: ["One ", "moment ", "while ", "I ", "think ", "it ", "over."], chunkDelayMs: 250 },
      { kind: "reply", text: "Bonjour !" },
    );
    await say("Greet me");
    await lastAnswer().getByText("One moment").waitFor();
    await page.getByLabel("Send to the running task as").selectOption("steering");
    await message().fill("Answer in French please");
    await page.getByRole("button", { name: "Send to the task" }).click();
    const steered = await until(
      async () => rig.server.requests.at(-1),
      (request) => JSON.stringify(request?.body ?? "").includes("Answer in French please"),
    );
    expect(JSON.stringify(steered?.body)).toContain("Answer in French please");
    await lastAnswer().getByText("Bonjour !").waitFor();
    await lastAnswer().getByText("Steering read by the model").waitFor();
    await conversation().getByText("You · steering").waitFor();
    expect(rig.problems.join("\n")).toBe("");
  });

  it("Cancel stops the running task", async () => {
    rig.server.enqueue({ kind: "reply", text: Array(40).fill("slow "), chunkDelayMs: 300 });
    await say("Write a long story");
    await lastAnswer().getByText("slow slow").waitFor();
    const task = await latestTask();
    await page.getByRole("button", { name: "Cancel", exact: true }).click();
    expect((await untilStatus(task.id, "cancelled")).status).toBe("cancelled");
    await page.getByRole("button", { name: "Send", exact: true }).waitFor();
    expect(await page.getByRole("button", { name: "Cancel", exact: true }).count()).toBe(0);
    expect(rig.problems.join("\n")).toBe("");
  });

  it("a new session starts empty; switching back shows the old session's messages", async () => {
    await page.getByRole("button", { name: "New session" }).click();
    expect(await page.locator(".turn").count()).toBe(0);
    await say("Hello in a second session");
    await lastAnswer().getByText("Hello from the test server").waitFor();
    const second = (await latestTask()).session_id;
    expect(second).not.toBe(firstSession);
    const sessions = page.getByRole("navigation", { name: "Sessions" });
    await sessions.getByRole("button", { name: new RegExp(`^${firstSession.slice(0, 8)}`) }).click();
    await conversation().getByText("Read my notes").waitFor();
    await conversation().getByText("Saved your todo.").waitFor();
    expect(await conversation().getByText("Hello in a second session").count()).toBe(0);
    expect(await page.locator(".chat-bar code").textContent()).toBe(firstSession);
    // The next message continues that session.
    await say("And one more");
    await lastAnswer().getByText("Hello from the test server").waitFor();
    expect((await latestTask()).session_id).toBe(firstSession);
    expect(rig.problems.join("\n")).toBe("");
  });

  it("completes slash commands from the daemon's /help and runs one", async () => {
    await message().fill("/sta");
    const list = page.getByRole("listbox", { name: "Commands" });
    await list.getByRole("option", { name: /\/status/ }).waitFor();
    await message().press("Tab");
    expect(await message().inputValue()).toBe("/status ");
    await message().press("Enter");
    await lastAnswer()
      .locator(".answer")
      .getByText(/pid \d+, up \d+ s, listening on/)
      .waitFor();
    await message().fill("/nothing-like-this");
    expect(await list.count()).toBe(0);
    await message().fill("");
    expect(rig.problems.join("\n")).toBe("");
  });

  it("speaks French", async () => {
    await page.getByLabel("Language").selectOption("fr");
    await page
      .getByRole("navigation", { name: "Sessions" })
      .getByRole("button", { name: "Nouvelle session" })
      .waitFor();
    await page.getByRole("button", { name: "Copier la réponse" }).first().waitFor();
    await page.getByLabel("Langue").selectOption("en");
  });
});

describe("the shell", () => {
  it("clicking the current tab on a sub-path opens the tab's root view", async () => {
    const task = await latestTask();
    await page.goto(`${rig.daemon.url}/tasks/${task.id}`);
    await page.getByRole("link", { name: "All tasks" }).waitFor();
    await page.getByRole("tab", { name: "Tasks" }).click();
    await page.getByLabel("Filter by status").waitFor();
    expect(new URL(page.url()).pathname).toBe("/tasks");
    expect(rig.problems.join("\n")).toBe("");
  });

  it("a new task shows in the Tasks list from the event stream", async () => {
    const before = await page.getByTestId("status-running").textContent();
    rig.server.enqueue({ kind: "reply", text: "Listed live." });
    await rig.api.sendMessage({ message: "A task made elsewhere", wait: true });
    // The list polls every 15 s: this arrives by the event stream.
    await page.getByRole("link", { name: "A task made elsewhere" }).waitFor({ timeout: 4_000 });
    expect(before).toContain("Running tasks");
    expect(rig.problems.join("\n")).toBe("");
  });
});
