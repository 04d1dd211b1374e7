import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { openDatabase } from "../../src/store/database.ts";
import { api as apiCall, startDaemon, type TestDaemon, tempDataDir } from "../helpers/daemon.ts";
import { runCli } from "../setup/helpers.ts";
import { buildTestPlugin } from "./buildFixtures.ts";

// Plugins end to end on a real daemon with plugins compiled from AssemblyScript: install, tools in the registry
// under the same policy chain as built-ins, config from the vault, HTTP only to hosts both the manifest and the
// policy allow, hostile plugins (hang, memory bomb, trap, undeclared host, oversized output) contained with the
// daemon healthy, reputation disabling and reset, reload and uninstall without a restart, routing rules, and the
// CLI and slash commands.

let daemon: TestDaemon;
let work: string;
let web: Server;
let webUrl: string;

const api = (method: string, path: string, body?: unknown) => apiCall(daemon, method, path, body, daemon.token);
const invoke = (tool: string, args: Record<string, unknown>) => api("POST", `/api/tools/${tool}/invoke`, args);
const cli = (args: string[]) => runCli(["plugin", ...args], { env: { ASSISTANT_DATA_DIR: daemon.dataDir } });
const writePolicy = (policy: Record<string, unknown>) =>
  writeFileSync(join(daemon.dataDir, "tools_policy.yaml"), stringify({ require_approval: [], ...policy }));

async function pluginFolder(name: string, manifest: Record<string, unknown>, fixture: "echo" | "hostile") {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "plugin.wasm"), await buildTestPlugin(fixture));
  writeFileSync(join(dir, "plugin.json"), JSON.stringify(manifest));
  return dir;
}

const ECHO = {
  id: "echo",
  name: "Echo",
  version: "1.0.0",
  kind: "tool",
  author: "tests",
  exports: ["echo", "greet", "fetch_allowed", "file_op"],
  tools: [
    {
      name: "echo",
      description: "Echo the arguments",
      export: "echo",
      parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    },
    { name: "greet", description: "Greet", export: "greet" },
    {
      name: "fetch",
      description: "Fetch a URL",
      export: "fetch_allowed",
      input_param: "url",
      parameters: { type: "object", properties: { url: { type: "string" } }, required: ["url"] },
    },
    {
      name: "files",
      description: "Read, list or write a file",
      export: "file_op",
      parameters: {
        type: "object",
        properties: { op: { type: "string" }, path: { type: "string" }, content: { type: "string" } },
        required: ["op", "path"],
      },
    },
  ],
  // allowed_paths is set in beforeAll, once the test's folder exists
  capabilities: { allowed_hosts: ["127.0.0.1"], config_keys: ["greeting_name"], allowed_paths: [] as string[] },
  routing_rules: [{ id: "invoices", keywords: ["invoice"], task_type: "data_analysis", priority: 5 }],
};
const HOSTILE = {
  id: "hostile",
  name: "Hostile",
  version: "0.1.0",
  kind: "tool",
  exports: ["spin", "bomb", "trap", "undeclared_host", "oversized", "echo"],
  tools: ["spin", "bomb", "trap", "oversized", "echo"].map((t) => ({ name: t, description: t, export: t })),
  limits: { timeout_ms: 400 },
};
HOSTILE.tools.push({ name: "undeclared", description: "x", export: "undeclared_host", input_param: "url" } as never);

beforeAll(async () => {
  work = tempDataDir("assistant-plugins-work-");
  ECHO.capabilities.allowed_paths.push(join(work, "shared"));
  web = createServer((_req, res) => res.end("hello from the allowed host"));
  await new Promise<void>((r) => web.listen(0, "127.0.0.1", r));
  webUrl = `http://127.0.0.1:${(web.address() as { port: number }).port}/page`;
  const dataDir = tempDataDir();
  writeFileSync(join(dataDir, "tools_policy.yaml"), stringify({ require_approval: [] }));
  // An invalid plugin already in the folder: it asks for a relative path, which would depend on the daemon's cwd.
  mkdirSync(join(dataDir, "plugins", "greedy"), { recursive: true });
  writeFileSync(
    join(dataDir, "plugins", "greedy", "plugin.json"),
    JSON.stringify({ ...ECHO, id: "greedy", capabilities: { allowed_paths: ["notes"] } }),
  );
  writeFileSync(join(dataDir, "plugins", "greedy", "plugin.wasm"), await buildTestPlugin("echo"));
  daemon = await startDaemon({ ASSISTANT_EMBEDDED_MODEL_PATH: join(dataDir, "none.gguf") }, dataDir);
}, 60_000);
afterAll(async () => {
  await daemon?.stop();
  await new Promise((r) => web?.close(r));
});

describe("plugin install and tools", () => {
  it("lists invalid plugins with the reason and installs a plugin with the CLI without a restart", async () => {
    const listed = (await api("GET", "/api/plugins")).json();
    expect(listed.items).toEqual([]);
    expect(listed.invalid).toEqual([{ folder: "greedy", reason: expect.stringContaining("an absolute path") }]);
    const result = await cli(["install", await pluginFolder("echo", ECHO, "echo")]);
    expect(result.stderr).toBe("");
    expect(result.stdout).toContain(
      "Installed echo 1.0.0 [tool], tools: echo__echo, echo__greet, echo__fetch, echo__files",
    );
    const plugin = (await api("GET", "/api/plugins/echo")).json();
    expect(plugin).toMatchObject({ plugin_id: "echo", score: 100, disabled_by_reputation: false, kind: "tool" });
    const tools = (await api("GET", "/api/tools")).json().tools as Array<{ name: string; parameters: unknown }>;
    expect(tools.find((t) => t.name === "echo__echo")!.parameters).toMatchObject({ required: ["text"] });
  });

  it("runs a plugin tool, marks its output as untrusted and validates arguments", async () => {
    const res = await invoke("echo__echo", { text: "hi" });
    expect(res.status).toBe(200);
    expect(res.json().result).toMatchObject({ status: "ok" });
    expect(res.json().result.output).toContain('{"text":"hi"}');
    expect(res.json().result.output).toContain("untrusted_data");
    expect((await invoke("echo__echo", { text: 5 })).status).toBe(400);
    // The plugin worker's WASI warning stays out of the daemon's output (the log under the supervisor).
    expect(daemon.output()).not.toContain("WASI is an experimental feature");
  });

  it("gives the plugin only the config keys it declares, from the vault", async () => {
    expect((await invoke("echo__greet", {})).json().result.output).toContain("Hello, stranger");
    await api("PUT", "/api/vault", { key: "plugin.echo.greeting_name", value: "Ada" });
    await api("POST", "/api/plugins/reload");
    expect((await invoke("echo__greet", {})).json().result.output).toContain("Hello, Ada");
  });

  it("blocks plugin tools by policy like built-in tools", async () => {
    writePolicy({ tool_profiles: { reader: ["read_file"] }, default_profile: "reader" });
    const denied = await invoke("echo__echo", { text: "hi" });
    expect(denied.status).toBe(403);
    expect(denied.json().error.details.rule).toContain("reader");
    writePolicy({ require_approval: ["echo__echo"] });
    const queued = await invoke("echo__echo", { text: "hi" });
    expect(queued.status).toBe(202);
    await api("POST", `/api/permissions/queue/${queued.json().queue_item_id}/deny`, {});
    writePolicy({});
  });

  it("lets a plugin reach a host only when its manifest and the tools policy both allow it", async () => {
    const blocked = await invoke("echo__fetch", { url: webUrl });
    expect(blocked.status).toBe(403);
    expect(blocked.json().error.details.rule).toContain("allowed_web_domains");
    writePolicy({ allowed_web_domains: ["127.0.0.1"] });
    const ok = await invoke("echo__fetch", { url: webUrl });
    expect(ok.json().result.output).toContain("hello from the allowed host");
    writePolicy({});
  });

  it("gives a plugin the files under its allowed_paths, and only those the tools policy allows too", async () => {
    await api("POST", "/api/plugins/reputation/reset", { plugin_id: "echo" });
    const shared = join(work, "shared");
    mkdirSync(shared, { recursive: true });
    writeFileSync(join(shared, "note.txt"), "remember the milk");
    writeFileSync(join(work, "secret.txt"), "not for plugins");
    symlinkSync(join(work, "secret.txt"), join(shared, "escape.txt"));
    const files = (args: Record<string, unknown>) => invoke("echo__files", args);
    const output = async (args: Record<string, unknown>) => {
      const res = await files(args);
      expect(res.status, JSON.stringify(res.json())).toBe(200);
      return res.json().result.output as string;
    };

    // in the manifest but not in the policy
    const blocked = await files({ op: "read", path: join(shared, "note.txt") });
    expect(blocked.status).toBe(403);
    expect(blocked.json().error.details.rule).toContain("allowed_read_paths");

    writePolicy({ allowed_read_paths: [work], allowed_write_paths: [shared] });
    expect(await output({ op: "read", path: join(shared, "note.txt") })).toContain(
      '{"ok":true,"content":"remember the milk","encoding":"utf8","bytes":17}',
    );
    const listing = await output({ op: "list", path: shared });
    expect(listing).toContain('{"name":"escape.txt","type":"link"},{"name":"note.txt","type":"file"}');
    expect(await output({ op: "write", path: join(shared, "out.txt"), content: "written by a plugin" })).toContain(
      '{"ok":true,"created":true,"bytes":19}',
    );
    expect(readFileSync(join(shared, "out.txt"), "utf8")).toBe("written by a plugin");
    const journal = readFileSync(join(daemon.dataDir, "logs", "tools_journal.jsonl"), "utf8");
    expect(journal).toContain(`"tool":"echo__files","path":"${join(shared, "out.txt")}"`);
    // ordinary failures are results the plugin handles, not denials
    expect(await output({ op: "read", path: join(shared, "missing.txt") })).toContain("does not exist");
    expect(await output({ op: "read", path: "note.txt" })).toContain("path must be absolute");
    expect(await output({ op: "delete", path: join(shared, "note.txt") })).toContain("bad fs request");

    // the policy allows all of work/, the manifest only work/shared: outside, by .. or through a symlink, refused
    for (const path of [join(work, "secret.txt"), `${shared}/../secret.txt`, join(shared, "escape.txt")]) {
      const refused = await files({ op: "read", path });
      expect(refused.status, path).toBe(403);
      expect(refused.json().error.details.rule).toBe("plugin echo allowed_paths");
      expect(refused.json().error.message).toContain(`${join(work, "secret.txt")} is outside`);
    }
    writePolicy({ allowed_read_paths: [shared] });
    const readOnly = await files({ op: "write", path: join(shared, "note.txt"), content: "overwritten" });
    expect(readOnly.status).toBe(403);
    expect(readOnly.json().error.details.rule).toContain("allowed_write_paths");
    expect(readFileSync(join(shared, "note.txt"), "utf8")).toBe("remember the milk");
    expect((await api("GET", "/api/plugins/echo")).json().reputation).toMatchObject({ denied: 5 });
    await api("POST", "/api/plugins/reputation/reset", { plugin_id: "echo" });
    writePolicy({});
  });
});

describe("hostile plugins", () => {
  it("contains hangs, memory bombs, traps, undeclared hosts and oversized output, then disables by reputation", async () => {
    const installed = await api("POST", "/api/plugins/install", {
      path: await pluginFolder("hostile", HOSTILE, "hostile"),
    });
    expect(installed.status).toBe(201);
    writePolicy({ allowed_web_domains: ["*"] });
    const outputOf = async (tool: string, args: Record<string, unknown> = {}) => (await invoke(tool, args)).json();

    const started = Date.now();
    expect((await outputOf("hostile__spin")).result).toMatchObject({
      status: "error",
      output: expect.stringContaining("within 400 ms"),
    });
    expect(Date.now() - started).toBeLessThan(5000);
    expect((await api("GET", "/api/health")).status).toBe(200);
    expect((await outputOf("hostile__echo")).result.status).toBe("ok"); // recovered after the hang

    expect((await outputOf("hostile__oversized")).result).toMatchObject({
      status: "error",
      output: expect.stringContaining("failed"),
    });
    expect((await outputOf("hostile__trap")).result).toMatchObject({
      status: "error",
      output: expect.stringContaining("crashed"),
    });
    const undeclared = await invoke("hostile__undeclared", { url: "http://example.com/" });
    expect(undeclared.status).toBe(403);
    expect((await api("GET", "/api/plugins/hostile")).json()).toMatchObject({ disabled_by_reputation: false });

    expect((await outputOf("hostile__bomb")).result).toMatchObject({
      status: "error",
      output: expect.stringContaining("crashed"),
    });
    const plugin = (await api("GET", "/api/plugins/hostile")).json();
    expect(plugin).toMatchObject({
      disabled_by_reputation: true,
      reputation: { timeouts: 1, traps: 2, denied: 1, failures: 1 },
    });
    expect(plugin.score).toBeLessThan(50);
    expect(plugin.disabled_reason).toContain("disabled by reputation");
    const names = ((await api("GET", "/api/tools")).json().tools as Array<{ name: string }>).map((t) => t.name);
    expect(names.filter((n) => n.startsWith("hostile__"))).toEqual([]);
    expect((await api("GET", "/api/health")).status).toBe(200);
    expect((await invoke("echo__echo", { text: "still fine" })).status).toBe(200);
    const db = openDatabase(join(daemon.dataDir, "assistant.db"));
    const disabled = db.prepare("SELECT data FROM events WHERE kind = 'plugin_disabled'").all() as Array<{
      data: string;
    }>;
    db.close();
    expect(disabled.map((e) => JSON.parse(e.data).plugin_id)).toEqual(["hostile"]);

    // Reset one plugin: enabled again with a clean score.
    expect((await api("POST", "/api/plugins/reputation/reset", { plugin_id: "hostile" })).json()).toEqual({
      reset: "hostile",
    });
    expect((await api("GET", "/api/plugins/hostile")).json()).toMatchObject({
      score: 100,
      disabled_by_reputation: false,
    });
    expect((await outputOf("hostile__echo")).result.status).toBe("ok");
    writePolicy({});
  }, 60_000);

  it("stops a spinning plugin when its fuel runs out, long before its timeout", async () => {
    const burner = { ...HOSTILE, id: "burner", name: "Burner", limits: { timeout_ms: 4_000, fuel: 50_000_000 } };
    expect(
      (await api("POST", "/api/plugins/install", { path: await pluginFolder("burner", burner, "hostile") })).status,
    ).toBe(201);
    // The manifest's fuel is lower than the default, so it wins; the echo plugin keeps the default.
    expect((await api("GET", "/api/plugins/burner")).json().limits).toEqual({
      timeout_ms: 4_000,
      memory_mb: 64,
      fuel: 50_000_000,
    });
    expect((await api("GET", "/api/plugins/echo")).json().limits.fuel).toBe(10_000_000_000);
    const started = Date.now();
    const spun = (await invoke("burner__spin", {})).json();
    expect(spun.result).toMatchObject({
      status: "error",
      output: expect.stringContaining("ran out of fuel (its limit is 50000000 instructions per call)"),
    });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect((await invoke("burner__echo", { text: "after" })).json().result.status).toBe("ok");
    expect((await api("GET", "/api/plugins/burner")).json().reputation).toMatchObject({ traps: 1, timeouts: 0 });
    expect((await api("DELETE", "/api/plugins/burner")).status).toBe(200);
  });

  it("moves the score with user feedback and resets every plugin with an empty body", async () => {
    expect((await api("POST", "/api/plugins/echo/feedback", { rating: "down" })).json()).toMatchObject({
      feedback_down: 1,
    });
    expect((await api("POST", "/api/plugins/echo/feedback", { rating: "meh" })).status).toBe(400);
    expect((await api("POST", "/api/plugins/reputation/reset")).json()).toEqual({ reset: "all" });
    expect((await api("GET", "/api/plugins/echo")).json()).toMatchObject({
      score: 100,
      reputation: { feedback_down: 0 },
    });
    expect((await api("POST", "/api/plugins/reputation/reset", { plugin_id: "ghost" })).status).toBe(404);
  });
});

describe("routing rules, reload, uninstall and bad input", () => {
  it("shows the rules and the match for a message, and routes a matching chat message", async () => {
    const rules = (await api("GET", "/api/plugins/routing_rules?message=please%20file%20this%20invoice")).json();
    expect(rules.items).toEqual([expect.objectContaining({ id: "invoices", source: { kind: "plugin", id: "echo" } })]);
    expect(rules.match).toMatchObject({
      matched: true,
      matched_on: "keyword: invoice",
      target: { kind: "task_type", name: "data_analysis" },
    });
    expect((await api("POST", "/api/plugins/routing_rules/match", { message: "hello there" })).json()).toEqual({
      matched: false,
    });
    expect((await api("POST", "/api/plugins/routing_rules/match", {})).status).toBe(400);
    const task = (await api("POST", "/api/tasks", { message: "Sum up this invoice" })).json();
    expect((await api("GET", `/api/tasks/${task.task_id ?? task.id}`)).json().task_type).toBe("data_analysis");
  });

  it("answers /plugins and /reload in chat and lists the catalog", async () => {
    const say = async (message: string) =>
      (await api("POST", "/api/message", { message, wait: true })).json().reply as string;
    expect(await say("/plugins")).toContain("echo 1.0.0 [tool] score 100, enabled");
    expect(await say("/reload")).toContain("Reloaded: 2 plugins (echo, hostile)");
    const catalog = await cli(["catalog", "--json"]);
    expect(JSON.parse(catalog.stdout).items).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: "plugin", id: "echo", author: "tests" })]),
    );
  });

  it("refuses bad installs and uninstalls without a restart", async () => {
    expect((await api("POST", "/api/plugins/install", { path: join(work, "missing") })).status).toBe(404);
    const badDir = join(work, "bad");
    mkdirSync(badDir);
    writeFileSync(join(badDir, "plugin.json"), "{not json");
    expect((await api("POST", "/api/plugins/install", { path: badDir })).json().error.message).toContain(
      "not valid JSON",
    );
    const lying = await pluginFolder(
      "lying",
      { ...ECHO, id: "lying", exports: ["echo", "nope"], tools: [{ name: "x", description: "x", export: "nope" }] },
      "echo",
    );
    expect((await api("POST", "/api/plugins/install", { path: lying })).json().error.message).toContain(
      "does not export nope",
    );
    expect((await api("POST", "/api/plugins/install", { path: join(work, "echo") })).status).toBe(409);
    expect((await cli(["uninstall", "hostile"])).stdout).toContain("Removed plugin hostile");
    expect((await api("GET", "/api/plugins/hostile")).status).toBe(404);
    expect((await api("DELETE", "/api/plugins/hostile")).status).toBe(404);
    expect((await api("DELETE", "/api/plugins/Bad.Id")).status).toBe(400);
  });
});
