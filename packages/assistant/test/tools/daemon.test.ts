import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { openDatabase } from "../../src/store/database.ts";
import { api as apiCall, startDaemon, type TestDaemon, tempDataDir } from "../helpers/daemon.ts";
import { runCli } from "../setup/helpers.ts";

// The tools surface end to end on a real daemon: the registry, the effective view, invoke through the same
// policy and review queue as the agent (200 / 403 / 202 then run on approval), `assistant toolset ...`, and a
// canary secret injected with VAULT: that must never appear in output, logs, events, the journal or the queue.

const CANARY = "canary-7f3a9c1e5b2d4f60a8e1";
let daemon: TestDaemon;
let work: string;

const api = (method: string, path: string, body?: unknown, token: string | null = daemon.token) =>
  apiCall(daemon, method, path, body, token);
const writePolicy = (policy: Record<string, unknown> | null) => {
  const file = join(daemon.dataDir, "tools_policy.yaml");
  if (policy === null) rmSync(file, { force: true });
  else writeFileSync(file, stringify(policy));
};
const cli = (args: string[]) => runCli(["toolset", ...args], { env: { ASSISTANT_DATA_DIR: daemon.dataDir } });

beforeAll(async () => {
  work = tempDataDir("assistant-tools-work-");
  daemon = await startDaemon({ ASSISTANT_EMBEDDED_MODEL_PATH: join(work, "no-model.gguf") });
});
afterAll(async () => {
  await daemon?.stop();
  if (daemon) rmSync(daemon.dataDir, { recursive: true, force: true });
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("tools over HTTP", () => {
  it("lists the registry with JSON Schema parameters", async () => {
    const res = await api("GET", "/api/tools");
    expect(res.status).toBe(200);
    const tools = res.json().tools as Array<{ name: string; parameters: { properties: object } }>;
    const names = tools.map((t) => t.name);
    for (const name of [
      "read_file",
      "write_file",
      "list_dir",
      "search",
      "run_command",
      "web_fetch",
      "web_search",
      "message",
    ]) {
      expect(names).toContain(name);
    }
    expect(Object.keys(tools.find((t) => t.name === "write_file")!.parameters.properties)).toEqual(["path", "content"]);
    expect((await api("GET", "/api/tools", undefined, null)).status).toBe(401);
  });

  it("denies everything without tools_policy.yaml, naming the rule", async () => {
    writePolicy(null);
    const res = await api("POST", "/api/tools/read_file/invoke", { path: "/etc/hostname" });
    expect(res.status).toBe(403);
    expect(res.json().error).toMatchObject({ code: "policy_denied" });
    expect(res.json().error.details.rule).toMatch(/tools_policy.yaml is missing/);
    const view = (await api("GET", "/api/tools/effective")).json();
    expect(view.policy_status).toBe("missing");
    expect(view.tools.every((t: { status: string }) => t.status === "blocked")).toBe(true);
  });

  it("runs allowed calls, reloads the policy on change and answers bad input clearly", async () => {
    const dir = join(work, "files");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "hello.txt"), "hello from a file");
    writePolicy({ allowed_read_paths: [dir], require_approval: [] });
    const ok = await api("POST", "/api/tools/read_file/invoke", { path: join(dir, "hello.txt") });
    expect(ok.status).toBe(200);
    expect(ok.json().result).toMatchObject({ status: "ok", tool: "read_file" });
    expect(ok.json().result.output).toContain("hello from a file");

    const failed = await api("POST", "/api/tools/read_file/invoke", { path: join(dir, "missing.txt") });
    expect(failed.status).toBe(200);
    expect(failed.json().result.status).toBe("error");

    const unknown = await api("POST", "/api/tools/format_disk/invoke", {});
    expect(unknown.status).toBe(404);
    expect(unknown.json().error.code).toBe("not_found");
    expect((await api("POST", "/api/tools/Bad..Name/invoke", {})).status).toBe(400);
    const badArgs = await api("POST", "/api/tools/read_file/invoke", { path: 12 });
    expect(badArgs.status).toBe(400);
    expect(badArgs.json().error.message).toMatch(/Invalid arguments for read_file: path/);
    expect((await api("POST", "/api/tools/read_file/invoke", [1, 2])).status).toBe(400);
    const huge = await api("POST", "/api/tools/write_file/invoke", { path: "x", content: "y".repeat(2 * 1024 * 1024) });
    expect(huge.status).toBe(413);
  });

  it("queues calls that need approval (202), runs them once approved and reports the result as an event", async () => {
    const dir = join(work, "out");
    mkdirSync(dir, { recursive: true });
    writePolicy({ allowed_write_paths: [dir], require_approval: ["write_file"] });
    const target = join(dir, "approved.txt");
    const res = await api("POST", "/api/tools/write_file/invoke", { path: target, content: "approved content" });
    expect(res.status).toBe(202);
    const { queue_item_id: itemId } = res.json();
    const item = (await api("GET", `/api/permissions/queue/${itemId}`)).json();
    expect(item).toMatchObject({ tool: "write_file", status: "pending", rule: "require_approval: write_file" });
    expect(() => readFileSync(target)).toThrow();

    expect((await api("POST", `/api/permissions/queue/${itemId}/approve`, { note: "fine" })).status).toBe(200);
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline) {
      try {
        if (readFileSync(target, "utf8") === "approved content") break;
      } catch {
        // not yet
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(readFileSync(target, "utf8")).toBe("approved content");
    // The event follows the write: wait for it rather than reading once.
    let completed: Record<string, unknown> | undefined;
    for (let i = 0; i < 200 && !completed; i++) {
      const db = openDatabase(join(daemon.dataDir, "assistant.db"));
      const rows = db
        .prepare("SELECT data FROM events WHERE kind = 'tool_call_completed' ORDER BY seq")
        .all() as Array<{ data: string }>;
      db.close();
      completed = rows.map((r) => JSON.parse(r.data)).find((d) => d.queue_item_id === itemId);
      if (!completed) await new Promise((r) => setTimeout(r, 25));
    }
    expect(completed).toMatchObject({ tool: "write_file", status: "ok", queue_item_id: itemId });
  });

  it("shows profiles and the effective view on the CLI", async () => {
    writePolicy({
      allowed_read_paths: [work],
      allowed_commands: ["git"],
      blocked_commands: ["rm"],
      tool_profiles: { readonly: ["read_file", "list_dir", "search"], dev: ["read_file", "run_command"] },
      default_profile: "readonly",
    });
    const profiles = await cli(["profiles"]);
    expect(profiles.code).toBe(0);
    expect(profiles.stdout).toContain("readonly (default_profile): read_file, list_dir, search");
    const effective = await cli(["effective"]);
    expect(effective.code).toBe(0);
    expect(effective.stdout).toMatch(/read_file\s+allowed\s+allowed_read_paths/);
    expect(effective.stdout).toMatch(
      /run_command\s+blocked\s+default_profile: profile readonly does not include run_command/,
    );
    const json = JSON.parse((await cli(["effective", "--json"])).stdout);
    expect(json.default_profile).toBe("readonly");
  });
});

describe("a VAULT: secret stays secret", () => {
  it("never appears in tool output, logs, events, the journal or the queue", async () => {
    expect((await api("PUT", "/api/vault", { key: "canary_key", value: CANARY })).status).toBe(200);
    writePolicy({ allowed_commands: ["printenv", "sh"], require_approval: ["run_command"] });
    const res = await api("POST", "/api/tools/run_command/invoke", {
      command: "VAULT:canary_key=CANARY_ENV sh -c 'printenv CANARY_ENV; echo $CANARY_ENV >&2; echo done'",
    });
    expect(res.status).toBe(202);
    const itemId = res.json().queue_item_id;
    await api("POST", `/api/permissions/queue/${itemId}/approve`);
    let output = "";
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline && !output.includes("done")) {
      const db = openDatabase(join(daemon.dataDir, "assistant.db"));
      const row = db
        .prepare("SELECT data FROM events WHERE kind = 'tool_call_completed' ORDER BY seq DESC LIMIT 1")
        .get() as { data: string } | undefined;
      db.close();
      output = row ? (JSON.parse(row.data).output_preview as string) : "";
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(output).toContain("[REDACTED");
    expect(output).toContain("done");

    const direct = await api("POST", "/api/permissions/mode", { mode: "allow_all" });
    expect(direct.status).toBe(200);
    const sync = await api("POST", "/api/tools/run_command/invoke", {
      command: "VAULT:canary_key=CANARY_ENV printenv CANARY_ENV",
    });
    expect(sync.status).toBe(200);
    expect(sync.json().result.output).toContain("[REDACTED");
    expect(sync.body).not.toContain(CANARY);
    await api("POST", "/api/permissions/mode", { mode: "ask_me" });

    const queue = await api("GET", "/api/permissions/queue?limit=100");
    expect(queue.body).not.toContain(CANARY);
    const events = openDatabase(join(daemon.dataDir, "assistant.db"));
    const dump = JSON.stringify(events.prepare("SELECT * FROM events").all());
    events.close();
    expect(dump).toContain("tool_call_completed");
    expect(dump).not.toContain(CANARY);
    for (const file of readdirSync(join(daemon.dataDir, "logs"))) {
      expect(readFileSync(join(daemon.dataDir, "logs", file), "utf8")).not.toContain(CANARY);
    }
    expect(daemon.output()).not.toContain(CANARY);
  });
});
