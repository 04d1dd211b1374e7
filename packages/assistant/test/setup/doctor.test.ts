import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { tinyGgufBytes, writeTinyGguf } from "../fixtures/tinyGguf.ts";
import { type Check, checkById, freePort, MACHINE_CHECKS, modeOf, type Sandbox, sandbox } from "./helpers.ts";

// `assistant doctor` against real data directories. The port is a free one per run so a daemon someone runs
// on 3876 on this machine cannot change the outcome.

async function doctor(box: Sandbox, args: string[] = [], env: NodeJS.ProcessEnv = {}) {
  const res = await box.run(["doctor", "--json", ...args], {
    env: { ASSISTANT_PORT: String(await freePort()), ...env },
  });
  const report = res.json<{
    checks: Check[];
    advice: string[];
    fixes?: { changes: { file: string; action: string }[] };
  }>();
  return { res, report, check: (id: string) => checkById(report.checks, id) };
}

describe("assistant doctor: the command sandbox", () => {
  it.runIf(process.platform === "linux")("is ok where bubblewrap works, and creates nothing to find out", async () => {
    const box = sandbox();
    const { check } = await doctor(box);
    expect(check("command_sandbox")).toMatchObject({ status: "ok", detail: expect.stringContaining("bubblewrap") });
    expect(existsSync(box.dataDir)).toBe(false);
  });

  it("warns that commands can read the assistant's own files when there is none, with what to do", async () => {
    const box = sandbox();
    const { res, check } = await doctor(box, [], { ASSISTANT_COMMAND_SANDBOX: "off" });
    expect(res.code).toBe(0);
    expect(check("command_sandbox")).toMatchObject({
      status: "warn",
      detail: expect.stringMatching(/can read the assistant's own files.*ASSISTANT_COMMAND_SANDBOX=off/),
      fix: expect.stringMatching(/instead of '\*'/),
    });
  });
});

describe("assistant doctor on an empty data directory", () => {
  it("warns about what is missing and names the fix, without changing anything", async () => {
    const box = sandbox();
    const { res, report, check } = await doctor(box);
    expect(res.code, res.stderr).toBe(0); // warnings only: nothing is broken yet
    expect(check("data_dir")).toMatchObject({ status: "warn", fixable: true });
    expect(check("config.tools_policy")).toMatchObject({
      status: "warn",
      fix: "assistant doctor --fix",
      fixable: true,
    });
    expect(check("config.tools_policy").detail).toMatch(/everything is denied.*doctor --fix writes a starter/);
    expect(check("config.llm_router")).toMatchObject({ status: "warn", fixable: true });
    expect(check("port").status).toBe("ok");
    expect(report.advice[0]).toMatch(
      /^Run `assistant doctor --fix` to repair: data directory, llm_router\.yaml, tools_policy\.yaml/,
    );
    expect(existsSync(box.dataDir)).toBe(false);
  });

  it("prints one line per check with the fix under it", async () => {
    const box = sandbox();
    const res = await box.run(["doctor"], { env: { ASSISTANT_PORT: String(await freePort()) } });
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^warn {2}tools_policy\.yaml +missing: everything is denied/m);
    expect(res.stdout).toMatch(/^ +fix: assistant doctor --fix$/m);
    expect(res.stdout).toMatch(/^ok {4}daemon port +port \d+ on 127\.0\.0\.1 is free$/m);
    expect(res.stdout).toMatch(/\d+ ok, \d+ warnings?, 0 failed/);
  });

  it("--fix creates what is missing, and the next doctor passes apart from the runtime and model", async () => {
    const box = sandbox();
    const fixed = await doctor(box, ["--fix"]);
    expect(fixed.res.code, fixed.res.stderr).toBe(0);
    const created = fixed.report.fixes!.changes.filter((c) => c.action === "created").map((c) => c.file);
    expect(created).toEqual([box.dataDir, box.file("tools_policy.yaml"), box.file("llm_router.yaml")]);
    expect(modeOf(box.dataDir)).toBe(0o700);
    expect(box.yaml("tools_policy.yaml").allowed_commands).toEqual([]);
    expect(box.yaml("llm_router.yaml").task_types.conversation.primary).toEqual({
      provider: "assistant_embedded",
      model: "default",
    });

    const { res, report } = await doctor(box);
    expect(res.code, res.stderr).toBe(0);
    const notOk = report.checks.filter((c) => c.status !== "ok" && !MACHINE_CHECKS.includes(c.id));
    expect(notOk).toEqual([]);
  });

  it("reports the embedded runtime and model as they really are", async () => {
    const box = sandbox();
    const { check } = await doctor(box);
    let installed = true;
    try {
      import.meta.resolve("node-llama-cpp");
    } catch {
      installed = false;
    }
    const runtime = check("embedded.runtime");
    if (installed)
      expect(runtime).toMatchObject({ status: "ok", detail: expect.stringMatching(/^llama\.cpp \S+ loads/) });
    else
      expect(runtime).toMatchObject({
        status: "warn",
        detail: expect.stringMatching(/^embedded runtime not installed/),
      });
    expect(check("embedded.model")).toMatchObject({
      status: "warn",
      detail: expect.stringMatching(/^qwen3_0_6b is not downloaded yet \(\d+ MB\)/),
    });
  });
});

describe("assistant doctor --fix on existing files", () => {
  it("aligns the default route in an existing llm_router.yaml and keeps its comments and other routes", async () => {
    const box = sandbox();
    mkdirSync(box.dataDir);
    const mine = [
      "# My router. Do not lose this comment.",
      "providers:",
      "  local_server:",
      "    base_url: http://localhost:11434 # the box under my desk",
      "task_types:",
      "  # chats go to my server",
      "  conversation:",
      "    primary: {provider: local_server, model: llama3.2}",
      "  code_generation: # code too",
      "    primary: {provider: local_server, model: qwen2.5-coder}",
      "",
    ].join("\n");
    writeFileSync(box.file("llm_router.yaml"), mine);
    const before = await doctor(box);
    expect(before.check("router.default_route")).toMatchObject({ status: "warn", fixable: true });
    expect(before.check("router.default_route").detail).toMatch(/assistant_core\/core is not the last fallback/);

    const fixed = await doctor(box, ["--fix"]);
    expect(fixed.res.code, fixed.res.stderr).toBe(0);
    expect(fixed.check("router.default_route").status).toBe("ok");
    const text = box.read("llm_router.yaml");
    for (const comment of [
      "# My router. Do not lose this comment.",
      "# the box under my desk",
      "# chats go to my server",
      "# code too",
    ]) {
      expect(text).toContain(comment);
    }
    const router = box.yaml("llm_router.yaml");
    expect(router.task_types.conversation).toEqual({
      primary: { provider: "assistant_embedded", model: "default" },
      fallback: [
        { provider: "local_server", model: "llama3.2" },
        { provider: "assistant_core", model: "core" },
      ],
    });
    expect(router.task_types.code_generation.primary.model).toBe("qwen2.5-coder");

    await doctor(box, ["--fix"]); // a second run has nothing left to do
    expect(box.read("llm_router.yaml")).toBe(text);
  });

  it("never overwrites an existing tools_policy.yaml, nor an invalid file it cannot repair", async () => {
    const box = sandbox();
    mkdirSync(box.dataDir);
    const policy = "# mine\nallowed_commands: [git]\n";
    const router = "task_types: [oops\n";
    writeFileSync(box.file("tools_policy.yaml"), policy);
    writeFileSync(box.file("llm_router.yaml"), router);
    const { res, check, report } = await doctor(box, ["--fix"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^error: 1 check\(s\) failed: config\.llm_router/m);
    expect(check("config.llm_router")).toMatchObject({ status: "fail", fixable: false });
    expect(check("config.llm_router").detail).toContain(
      `${box.file("llm_router.yaml")}: line 2, column 1: YAML syntax error`,
    );
    expect(report.checks.some((c) => c.id === "router.default_route")).toBe(false);
    expect(box.read("tools_policy.yaml")).toBe(policy);
    expect(box.read("llm_router.yaml")).toBe(router);
  });

  it("fails on a vault.key readable by others and --fix makes it 0600 again, keeping the vault usable", async () => {
    const box = sandbox();
    const stored = await box.run(["vault", "set", "search_api_key"], { input: "s3cr3t-value\n" });
    expect(stored.code, stored.stderr).toBe(0);
    chmodSync(box.file("vault.key"), 0o644);
    writeFileSync(box.file("notes.txt"), "x");
    chmodSync(box.file("notes.txt"), 0o664);

    const broken = await doctor(box);
    expect(broken.res.code).toBe(1);
    expect(broken.check("file_modes")).toMatchObject({ status: "fail", fixable: true });
    expect(broken.check("file_modes").detail).toContain("vault.key (0644)");
    expect(broken.check("vault.key_source")).toMatchObject({ status: "warn" });
    expect(broken.check("vault.key_source").fix).toContain("ASSISTANT_VAULT_MASTER_KEY");

    const fixed = await doctor(box, ["--fix"]);
    expect(fixed.res.code, fixed.res.stderr).toBe(0);
    expect(modeOf(box.file("vault.key"))).toBe(0o600);
    expect(modeOf(box.file("notes.txt"))).toBe(0o600);
    expect(fixed.check("file_modes").status).toBe("ok");
    const read = await box.run(["vault", "get", "search_api_key"]);
    expect(read.stdout).toBe("s3cr3t-value\n");
  });

  it("is satisfied with the vault key when ASSISTANT_VAULT_MASTER_KEY protects the vault", async () => {
    const box = sandbox();
    const env = { ASSISTANT_VAULT_MASTER_KEY: "correct horse battery staple" };
    expect((await box.run(["vault", "set", "k"], { input: "v", env })).code).toBe(0);
    const { check } = await doctor(box, [], env);
    expect(check("vault.key_source")).toMatchObject({
      status: "ok",
      detail: "protected by ASSISTANT_VAULT_MASTER_KEY",
    });
  });

  it("fails when ASSISTANT_VAULT_MASTER_KEY is set on a key-file vault, with the rekey as the fix, and is ok after it", async () => {
    const box = sandbox();
    expect((await box.run(["vault", "set", "k"], { input: "v" })).code).toBe(0);
    const warned = await doctor(box);
    expect(warned.check("vault.key_source").fix).toContain("assistant vault rekey --to master-key");
    const env = { ASSISTANT_VAULT_MASTER_KEY: "correct horse battery staple" };
    const mismatch = await doctor(box, [], env);
    expect(mismatch.res.code).toBe(1);
    expect(mismatch.check("vault.key_source")).toMatchObject({
      status: "fail",
      detail:
        "ASSISTANT_VAULT_MASTER_KEY is set, but the vault was created with the key file vault.key: vault commands refuse to open it",
      fix: expect.stringContaining("`assistant vault rekey --to master-key`"),
    });
    expect((await box.run(["vault", "rekey", "--to", "master-key"], { env })).code).toBe(0);
    expect((await doctor(box, [], env)).check("vault.key_source").status).toBe("ok");
    const unset = await doctor(box);
    expect(unset.check("vault.key_source")).toMatchObject({
      status: "fail",
      detail: "the vault was created with ASSISTANT_VAULT_MASTER_KEY, which is not set here",
    });
  });
});

describe("assistant doctor: database, settings, model file, data directory", () => {
  it("fails on a damaged database and passes on a healthy one", async () => {
    const box = sandbox();
    mkdirSync(box.dataDir);
    writeFileSync(box.file("assistant.db"), "this is not a database at all, just text".repeat(200));
    const bad = await doctor(box);
    expect(bad.res.code).toBe(1);
    expect(bad.check("store")).toMatchObject({ status: "fail" });
    expect(bad.check("store").fix).toMatch(/move assistant\.db aside/);

    const db = new Database(box.file("assistant.db.new"));
    db.exec("CREATE TABLE t (x TEXT); INSERT INTO t VALUES ('a'); PRAGMA user_version = 1;");
    db.close();
    renameSync(box.file("assistant.db.new"), box.file("assistant.db"));
    const good = await doctor(box);
    expect(good.check("store")).toMatchObject({ status: "ok", detail: "integrity ok (schema 1)" });
  });

  it("fails on a setting the daemon would refuse, from assistant.env", async () => {
    const box = sandbox();
    mkdirSync(box.dataDir);
    writeFileSync(box.file("assistant.env"), "ASSISTANT_LOG = loud\n");
    const res = await box.run(["doctor", "--json"], { env: { ASSISTANT_PORT: String(await freePort()) } });
    expect(res.code).toBe(1);
    expect(checkById(res.json().checks, "settings")).toMatchObject({
      status: "fail",
      detail: expect.stringContaining("ASSISTANT_LOG"),
    });
  });

  it("checks that the model file is a sound GGUF file", async () => {
    const box = sandbox();
    const fake = join(box.root, "fake.gguf");
    writeFileSync(fake, "NOPE not a model");
    const wrong = await doctor(box, [], { ASSISTANT_EMBEDDED_MODEL_PATH: fake });
    expect(wrong.check("embedded.model")).toMatchObject({
      status: "fail",
      detail: expect.stringMatching(/not a usable GGUF file: it does not start with "GGUF"/),
    });
    const gone = await doctor(box, [], { ASSISTANT_EMBEDDED_MODEL_PATH: join(box.root, "missing.gguf") });
    expect(gone.check("embedded.model").detail).toMatch(/does not exist/);
    const unknown = await doctor(box, [], { ASSISTANT_EMBEDDED_MODEL: "gpt-17" });
    expect(unknown.check("embedded.model")).toMatchObject({
      status: "fail",
      detail: expect.stringContaining("qwen3_0_6b"),
    });

    // A truncated catalogue download in the models folder is reported, with how to get a good copy.
    mkdirSync(join(box.dataDir, "models"), { recursive: true });
    const cachedPath = join(box.dataDir, "models", "qwen3_0_6b.gguf");
    writeFileSync(cachedPath, tinyGgufBytes().subarray(0, 4096));
    const truncated = await doctor(box);
    expect(truncated.check("embedded.model")).toMatchObject({
      status: "fail",
      fix: expect.stringContaining("embedded-download"),
    });
    writeTinyGguf(cachedPath);
    const cached = await doctor(box);
    expect(cached.check("embedded.model")).toMatchObject({ status: "ok", detail: `qwen3_0_6b: ${cachedPath}` });
    const named = await doctor(box, [], { ASSISTANT_EMBEDDED_MODEL_PATH: cachedPath });
    expect(named.check("embedded.model").status).toBe("ok");
  });

  it("fails clearly when the data directory is below a regular file, and --fix refuses too", async () => {
    const box = sandbox();
    const blocker = join(box.root, "plain-file");
    writeFileSync(blocker, "x");
    const env = { ASSISTANT_DATA_DIR: join(blocker, "data") };
    const { res, check } = await doctor(box, [], env);
    expect(res.code).toBe(1);
    expect(check("data_dir")).toMatchObject({ status: "fail", fixable: false });
    expect(check("data_dir").detail).toBe(
      `cannot create ${join(blocker, "data")}: ${blocker} is a file, not a folder; set ASSISTANT_DATA_DIR to a folder you own`,
    );
    const fix = await box.run(["doctor", "--fix"], { env });
    expect(fix.code).toBe(1);
    expect(fix.stderr).toMatch(/^error: the data directory cannot be used: .* is a file, not a folder/m);
    expect(readFileSync(blocker, "utf8")).toBe("x");
  });
});
