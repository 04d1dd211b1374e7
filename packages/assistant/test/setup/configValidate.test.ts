import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { sandbox } from "./helpers.ts";

async function initialised() {
  const box = sandbox();
  const res = await box.run(["init", "--defaults"]);
  expect(res.code, res.stderr).toBe(0);
  return box;
}

/** Writes `text` to the data-dir file, runs `config validate`, and checks the file was left byte for byte. */
async function validateBroken(name: string, text: string) {
  const box = await initialised();
  writeFileSync(box.file(name), text);
  const before = readFileSync(box.file(name));
  const res = await box.run(["config", "validate"]);
  expect(readFileSync(box.file(name)).equals(before)).toBe(true);
  return { box, res };
}

describe("assistant config validate", () => {
  it("exits 0 on the files init writes, listing each file", async () => {
    const box = await initialised();
    const res = await box.run(["config", "validate"]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain(`ok       ${box.file("llm_router.yaml")}`);
    expect(res.stdout).toContain(`ok       ${box.file("tools_policy.yaml")}`);
    expect(res.stdout).toMatch(/missing {2}.*voice_router\.yaml: no speech services/);
    expect(res.stderr).toBe("");
  });

  it("reports broken YAML with the file and the line", async () => {
    const { box, res } = await validateBroken("tools_policy.yaml", "allowed_commands: [git\nallowed_read_paths: []\n");
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`error: invalid configuration:\n  ${box.file("tools_policy.yaml")}: line `);
    expect(res.stderr).toMatch(/YAML syntax error/);
    expect(res.stdout).toMatch(/^INVALID {2}.*tools_policy\.yaml/m);
  });

  it("names an unknown key", async () => {
    const router = 'version: "1"\nglobl:\n  enable_metrics: true\n';
    const { box, res } = await validateBroken("llm_router.yaml", router);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`${box.file("llm_router.yaml")}: globl: unknown key`);
  });

  it("names a value of the wrong type with the expected type", async () => {
    const { box, res } = await validateBroken("tools_policy.yaml", "# mine\nallowed_commands: git\n");
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`${box.file("tools_policy.yaml")}: allowed_commands: expected array, got string`);
  });

  it("reports every invalid file at once, including JSON and env files, and --json says which", async () => {
    const box = await initialised();
    writeFileSync(box.file("agent_profile.json"), '{"name": "A", }');
    writeFileSync(box.file("connectors.env"), "ASSISTANT_CHANNEL_A_ENABLED 1\n");
    writeFileSync(
      box.file("llm_router.yaml"),
      "task_types:\n  conversation:\n    primary: {provider: nobody, model: x}\n",
    );
    const res = await box.run(["config", "validate", "--json"]);
    expect(res.code).toBe(1);
    const report = res.json();
    expect(report.valid).toBe(false);
    const invalid = report.files.filter((f: { status: string }) => f.status === "invalid");
    expect(invalid.map((f: { id: string }) => f.id).sort()).toEqual(["agent_profile", "connectors_env", "llm_router"]);
    const router = invalid.find((f: { id: string }) => f.id === "llm_router");
    expect(router.error.key).toBe("task_types.conversation.primary.provider");
    expect(router.error.reason).toMatch(/"nobody" is not allowed/);
    expect(invalid.find((f: { id: string }) => f.id === "connectors_env").error).toEqual({
      key: "line 1",
      reason: "expected KEY=value",
    });
  });
});
