import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebRig, type WebRig } from "./browser.ts";

// The Settings tab in Chromium against a real daemon (test/browser.ts): every change is checked through the API
// (and the profile in the next prompt the scripted model server receives), refused input gets the daemon's
// message and changes nothing, French labels, no console error but the refused requests made on purpose.

let rig: WebRig;
let page: Page;

beforeAll(async () => {
  rig = await startWebRig();
  page = rig.page;
  await rig.signIn();
  await page.getByRole("tab", { name: "Settings" }).click();
  await page.waitForURL("**/settings");
}, 60_000);

afterAll(async () => {
  await rig?.close();
});

const region = (name: string) => page.getByRole("region", { name, exact: true });
/** Chromium logs each refused request once ("… status of 400"): expected after a deliberate bad input. */
function expectRefused(status: number) {
  const others = rig.problems.filter((line) => !line.includes(`status of ${status}`));
  expect(rig.problems.length - others.length).toBe(1);
  rig.problems.splice(0, rig.problems.length, ...others);
}
/** The system prompt of the last chat request the scripted model server received. */
function lastSystemPrompt(): string {
  const chats = rig.server.requests.filter((r) => r.path.endsWith("/chat/completions"));
  const body = chats.at(-1)?.body as { messages: Array<{ role: string; content: string }> };
  return body.messages.find((m) => m.role === "system")?.content ?? "";
}

describe("the Settings tab", () => {
  it("saves the agent profile, which reaches the next prompt; a refused field changes nothing", async () => {
    const profile = region("Agent profile");
    await expect.poll(() => profile.getByLabel("Name", { exact: true }).inputValue()).toBe("Assistant");

    await profile.getByLabel("Name", { exact: true }).fill("N".repeat(81));
    await profile.getByRole("button", { name: "Save profile" }).click();
    await profile
      .getByRole("alert")
      .getByText(/body\.name: name: at most 80 characters/)
      .waitFor();
    expectRefused(400);
    expect((await rig.api.getAgentProfile()).name).toBe("Assistant");

    await profile.getByLabel("Name", { exact: true }).fill("Ada");
    await profile.getByLabel("Role", { exact: true }).fill("Research companion");
    await profile.getByLabel("Formality").selectOption("formal");
    await profile.getByLabel("Rules (one per line)").fill("Cite the file you read.\n\nAnswer in two lines.");
    await profile.getByRole("button", { name: "Save profile" }).click();
    await profile.getByRole("status").getByText("Profile saved. The next message uses it.").waitFor();
    expect(await rig.api.getAgentProfile()).toMatchObject({
      name: "Ada",
      role: "Research companion",
      formality: "formal",
      rules: ["Cite the file you read.", "Answer in two lines."],
    });

    await rig.api.sendMessage({ message: "Hello", wait: true });
    const prompt = lastSystemPrompt();
    expect(prompt).toContain("You are Ada, research companion");
    expect(prompt).toContain("Address the user formally.");
    expect(prompt).toContain("Rule: Answer in two lines.");
  });

  it("switches the approval mode only after the warning is confirmed", async () => {
    const mode = region("Approval mode");
    await mode.getByTestId("approval-mode").getByText("ask me").waitFor();
    await mode.getByRole("button", { name: "Allow all…" }).click();
    const confirm = mode.getByRole("group", { name: "Confirm allow all" });
    await confirm.getByText(/Warning: with allow all/).waitFor();
    await confirm.getByRole("button", { name: "Cancel" }).click();
    expect((await rig.api.getApprovalMode()).mode).toBe("ask_me");

    await mode.getByRole("button", { name: "Allow all…" }).click();
    await confirm.getByRole("button", { name: "Yes, allow all" }).click();
    await mode.getByRole("status").getByText("Approval mode: allow all.").waitFor();
    expect((await rig.api.getApprovalMode()).mode).toBe("allow_all");
    await mode.getByRole("button", { name: "Ask me again" }).click();
    await mode.getByRole("status").getByText("Approval mode: ask me.").waitFor();
    expect((await rig.api.getApprovalMode()).mode).toBe("ask_me");
  });

  it("creates and deletes a persistent decision; a bad one gets the daemon's message", async () => {
    const decisions = region("Persistent decisions");
    await decisions.getByText("No decision yet.").waitFor();
    await decisions.getByRole("button", { name: "Add decision" }).click();
    await decisions
      .getByRole("alert")
      .getByText(/body\.tool/)
      .waitFor();
    expectRefused(400);

    await decisions.getByLabel("Tool", { exact: true }).fill("read_file");
    await decisions.getByLabel("Scope", { exact: true }).fill("/tmp/notes");
    await decisions.getByLabel("Effect", { exact: true }).selectOption("deny");
    await decisions.getByRole("button", { name: "Add decision" }).click();
    await decisions.getByRole("status").getByText("Decision added: read_file for /tmp/notes.").waitFor();
    expect((await rig.api.listDecisions()).items).toMatchObject([
      { tool: "read_file", scope: "/tmp/notes", effect: "deny" },
    ]);
    await decisions.getByRole("button", { name: "Delete: read_file /tmp/notes" }).click();
    await decisions.getByRole("status").getByText("Decision deleted.").waitFor();
    expect((await rig.api.listDecisions()).items).toEqual([]);
    await decisions.getByText("No decision yet.").waitFor();
  });

  it("edits tools_policy.yaml: an invalid text is refused where it is wrong and leaves the file alone", async () => {
    const policy = region("Tools policy");
    const file = join(rig.daemon.dataDir, "tools_policy.yaml");
    await policy.getByText(/missing: every tool is denied/).waitFor();
    await policy.getByTestId("effective-read_file").getByText("blocked").waitFor();

    const editor = policy.getByLabel("tools_policy.yaml", { exact: true });
    await editor.fill("allowed_read_pathz:\n  - /tmp\n");
    await policy.getByRole("button", { name: "Save policy" }).click();
    await policy
      .getByRole("alert")
      .getByText(/allowed_read_pathz: unknown key.*the file was not changed/)
      .waitFor();
    await policy.getByText("Look at: allowed_read_pathz").waitFor();
    expectRefused(400);
    expect(() => readFileSync(file, "utf8")).toThrow(/ENOENT/);

    const yaml = "# Reads in /tmp only (my comment)\nallowed_read_paths:\n  - /tmp # notes live here\n";
    await editor.fill(yaml);
    await policy.getByRole("button", { name: "Save policy" }).click();
    await policy.getByRole("status").getByText("Policy saved and in force.").waitFor();
    expect(readFileSync(file, "utf8")).toBe(yaml);
    const effective = await rig.api.getEffectiveTools();
    expect(effective.policy_status).toBe("ok");
    const readFile = effective.tools.find((tool) => tool.name === "read_file")!;
    expect(readFile.status).toBe("allowed");
    await policy.getByTestId("effective-read_file").getByText("allowed", { exact: true }).waitFor();
    await policy.getByTestId("effective-read_file").getByText(readFile.rule, { exact: false }).waitFor();
  });

  it("stores a provider key write-only, toggles learning, and speaks French", async () => {
    const keys = region("Provider keys");
    await keys.getByLabel("Key name", { exact: true }).fill("cloud_a_api_key");
    await keys.getByLabel("Value", { exact: true }).fill("sk-canary-4242");
    await keys.getByRole("button", { name: "Store key" }).click();
    await keys.getByRole("status").getByText("Stored in the vault: cloud_a_api_key.").waitFor();
    await keys.getByRole("list", { name: "Stored key names" }).getByText("cloud_a_api_key").waitFor();
    expect((await rig.api.listVaultKeys()).items.map((item) => item.key)).toContain("cloud_a_api_key");
    expect(await keys.getByLabel("Value", { exact: true }).inputValue()).toBe("");
    expect(await page.content()).not.toContain("sk-canary-4242");

    const learning = region("Memory learning").getByLabel("Learn from conversations");
    const before = (await rig.api.getMemorySettings()).learning_enabled;
    expect(await learning.isChecked()).toBe(before);
    await learning.click();
    await expect.poll(async () => (await rig.api.getMemorySettings()).learning_enabled).toBe(!before);
    await learning.click();
    await expect.poll(async () => (await rig.api.getMemorySettings()).learning_enabled).toBe(before);

    await region("Language and theme").getByLabel("Color theme").selectOption("dark");
    expect(await page.locator("html").getAttribute("data-theme")).toBe("dark");
    await region("Language and theme").getByLabel("Interface language").selectOption("fr");
    await page.getByRole("heading", { name: "Réglages", exact: true }).waitFor();
    await region("Profil de l'agent").getByLabel("Registre").waitFor();
    await region("Mode d'approbation").getByRole("button", { name: "Tout autoriser…" }).waitFor();
    await region("Décisions permanentes").getByRole("button", { name: "Ajouter la décision" }).waitFor();
    await region("Politique des outils").getByRole("button", { name: "Enregistrer la politique" }).waitFor();
    await region("Clés des fournisseurs").getByLabel("Nom de la clé", { exact: true }).waitFor();
    await region("Langue et thème").getByLabel("Langue de l'interface").selectOption("en");
    await page.getByRole("heading", { name: "Settings", exact: true }).waitFor();
    expect(rig.problems).toEqual([]);
  });
});
