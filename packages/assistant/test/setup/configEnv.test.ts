import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ENV_VARIABLES, SETTING_KEYS } from "../../src/config/envVariables.ts";
import { modeOf, sandbox } from "./helpers.ts";

describe("assistant config env set/get", () => {
  it("sets a value given on the command line, reads it back and says to restart the daemon", async () => {
    const box = sandbox();
    const set = await box.run(["config", "env", "set", "ASSISTANT_LOG", "debug"]);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toBe(
      `set ASSISTANT_LOG in ${box.file("assistant.env")}; restart the daemon to apply it (\`assistant stop\` then \`assistant start\`)\n`,
    );
    expect(box.read("assistant.env")).toBe("ASSISTANT_LOG=debug\n");
    expect(modeOf(box.file("assistant.env"))).toBe(0o600);
    const get = await box.run(["config", "env", "get", "ASSISTANT_LOG"]);
    expect(get).toMatchObject({ code: 0, stdout: "debug\n" });
  });

  it("reads the value from standard input when none is given", async () => {
    const box = sandbox();
    const set = await box.run(["config", "env", "set", "ASSISTANT_MESSAGE_WEBHOOK_URL"], {
      input: "https://hooks.example.net/a b?x=1\n",
    });
    expect(set.code, set.stderr).toBe(0);
    const get = await box.run(["config", "env", "get", "ASSISTANT_MESSAGE_WEBHOOK_URL"]);
    expect(get.stdout).toBe("https://hooks.example.net/a b?x=1\n");
  });

  it("understands hand-written lines with spaces around = and keeps comments and other lines when setting", async () => {
    const box = sandbox();
    mkdirSync(box.dataDir);
    writeFileSync(
      box.file("assistant.env"),
      "# my settings\nASSISTANT_LOG = warn   # quiet please\n\nexport ASSISTANT_PORT=4000\n",
    );
    expect((await box.run(["config", "env", "get", "ASSISTANT_LOG"])).stdout).toBe("warn\n");
    expect((await box.run(["config", "env", "get", "ASSISTANT_PORT"])).stdout).toBe("4000\n");

    expect((await box.run(["config", "env", "set", "ASSISTANT_PORT", "4100"])).code).toBe(0);
    expect((await box.run(["config", "env", "set", "ASSISTANT_MAX_TOOL_ROUNDS", "12"])).code).toBe(0);
    expect(box.read("assistant.env")).toBe(
      "# my settings\nASSISTANT_LOG = warn   # quiet please\n\nASSISTANT_PORT=4100\nASSISTANT_MAX_TOOL_ROUNDS=12\n",
    );
  });

  it("refuses secret-looking keys and points to the vault, writing nothing", async () => {
    const box = sandbox();
    for (const key of ["CLOUD_A_API_KEY", "CHANNEL_A_BOT_TOKEN", "MY_PASSWORD"]) {
      const res = await box.run(["config", "env", "set", key, "sk-live-123"]);
      expect(res.code).toBe(1);
      expect(res.stderr).toBe(
        `error: ${key} looks like a secret; secrets go into the encrypted vault, not into assistant.env: run \`assistant vault set ${key.toLowerCase()}\`\n`,
      );
    }
    // Without a value it refuses before waiting for standard input.
    const piped = await box.run(["config", "env", "set", "CLOUD_A_API_KEY"], { input: "sk-live-123\n" });
    expect(piped.code).toBe(1);
    const master = await box.run(["config", "env", "set", "ASSISTANT_VAULT_MASTER_KEY", "hunter2"]);
    expect(master.code).toBe(1);
    expect(master.stderr).toMatch(/must not be written into a file next to the vault/);
    expect(existsSync(box.file("assistant.env"))).toBe(false);
  });

  it("refuses invalid variable names and values the daemon would reject", async () => {
    const box = sandbox();
    for (const key of ["1BAD", "BAD-KEY", "A B", "ÉTÉ"]) {
      const res = await box.run(["config", "env", "set", key, "x"]);
      expect(res.code, key).toBe(1);
      expect(res.stderr).toContain(`error: invalid variable name ${JSON.stringify(key)}: use letters, digits and _`);
    }
    const port = await box.run(["config", "env", "set", "ASSISTANT_PORT", "eighty"]);
    expect(port.code).toBe(1);
    expect(port.stderr).toBe('error: ASSISTANT_PORT: must be a whole number from 0 to 65535 (got "eighty")\n');
    expect(existsSync(box.file("assistant.env"))).toBe(false);
  });

  it("exits 1 with a message for a variable that is not set", async () => {
    const box = sandbox();
    const res = await box.run(["config", "env", "get", "ASSISTANT_BIND"]);
    expect(res).toMatchObject({
      code: 1,
      stdout: "",
      stderr: "error: ASSISTANT_BIND is not set in assistant.env or connectors.env\n",
    });
  });

  it("fails clearly when the data directory cannot be created", async () => {
    const box = sandbox();
    const blocker = join(box.root, "file");
    writeFileSync(blocker, "");
    const res = await box.run(["config", "env", "set", "ASSISTANT_LOG", "info"], {
      env: { ASSISTANT_DATA_DIR: join(blocker, "data") },
    });
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(
      `error: the data directory cannot be used: cannot create ${join(blocker, "data")}: ${blocker} is a file, not a folder; set ASSISTANT_DATA_DIR to a folder you own\n`,
    );
  });

  it("refuses to rewrite an env file it cannot parse, leaving it as it was", async () => {
    const box = sandbox();
    mkdirSync(box.dataDir);
    writeFileSync(box.file("assistant.env"), "this line is not an assignment\n");
    const res = await box.run(["config", "env", "set", "ASSISTANT_LOG", "info"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("assistant.env: line 1: expected KEY=value");
    expect(readFileSync(box.file("assistant.env"), "utf8")).toBe("this line is not an assignment\n");
  });
});

describe("assistant config env: typos and unset", () => {
  it("refuses to set an ASSISTANT_ name nothing reads, with the close match; unset removes a variable", async () => {
    const box = sandbox();
    const typo = await box.run(["config", "env", "set", "ASSISTANT_PROT", "4100"]);
    expect(typo.code).toBe(1);
    expect(typo.stderr).toBe(
      'error: ASSISTANT_PROT is not a variable of the assistant (did you mean "ASSISTANT_PORT"?); `assistant config env list` lists them\n',
    );
    expect(existsSync(box.file("assistant.env"))).toBe(false);

    mkdirSync(box.dataDir, { recursive: true });
    writeFileSync(box.file("assistant.env"), "# my settings\nASSISTANT_LOG=debug\nASSISTANT_PORT=4100\n");
    writeFileSync(box.file("connectors.env"), "ASSISTANT_LOG=error\n");
    const unset = await box.run(["config", "env", "unset", "ASSISTANT_LOG"]);
    expect(unset.code, unset.stderr).toBe(0);
    expect(unset.stdout).toBe(
      `removed ASSISTANT_LOG from ${box.file("assistant.env")} and ${box.file("connectors.env")}; restart the daemon to apply it (\`assistant restart\`)\n`,
    );
    expect(box.read("assistant.env")).toBe("# my settings\nASSISTANT_PORT=4100\n");
    expect(box.read("connectors.env")).toBe("");
    const again = await box.run(["config", "env", "unset", "ASSISTANT_LOG"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe("error: ASSISTANT_LOG is not set in assistant.env or connectors.env\n");
    const near = await box.run(["config", "env", "unset", "ASSISTANT_PROT"]);
    expect(near.stderr).toContain('(did you mean "ASSISTANT_PORT"?)');
  });

  it("config validate and doctor warn about an unknown ASSISTANT_ name in an env file, with the close match", async () => {
    const box = sandbox();
    mkdirSync(box.dataDir, { recursive: true });
    writeFileSync(box.file("assistant.env"), "ASSISTANT_LOG=debug\nASSISTANT_PROT=4100\n");
    writeFileSync(box.file("connectors.env"), "ASSISTANT_CHANNEL_A_ENABLED=1\nCLOUD_B_API_BASE=x\nASSISTANT_ZZZ=1\n");
    const validate = await box.run(["config", "validate"]);
    expect(validate.code, validate.stderr).toBe(0);
    expect(validate.stderr).toBe(
      [
        "warning: assistant.env line 2: ASSISTANT_PROT is not a variable of the assistant (did you mean ASSISTANT_PORT?); nothing reads it (remove it with `assistant config env unset ASSISTANT_PROT`)",
        "warning: connectors.env line 3: ASSISTANT_ZZZ is not a variable of the assistant; nothing reads it (remove it with `assistant config env unset ASSISTANT_ZZZ`)",
        "",
      ].join("\n"),
    );
    const json = await box.run(["config", "validate", "--json"]);
    expect(json.json().unknown_variables).toEqual([
      { key: "ASSISTANT_PROT", file: "assistant.env", line: 2, suggestion: "ASSISTANT_PORT" },
      { key: "ASSISTANT_ZZZ", file: "connectors.env", line: 3 },
    ]);
    const doctor = await box.run(["doctor", "--json"]);
    const check = doctor.json().checks.find((c: { id: string }) => c.id === "env.unknown_variables");
    expect(check).toMatchObject({
      status: "warn",
      detail: expect.stringContaining(
        "ASSISTANT_PROT is not a variable of the assistant (did you mean ASSISTANT_PORT?)",
      ),
      fix: "rename ASSISTANT_PROT to ASSISTANT_PORT in assistant.env",
    });
  });
});

describe("assistant config env list", () => {
  it("lists every variable of the registry with the value in force and its source, masking secrets", async () => {
    const box = sandbox();
    mkdirSync(box.dataDir);
    writeFileSync(
      box.file("connectors.env"),
      "ASSISTANT_CHANNEL_A_ENABLED=1\nCHANNEL_A_BOT_TOKEN=123456:very-secret\nASSISTANT_LOG=error\n",
    );
    writeFileSync(box.file("assistant.env"), "ASSISTANT_LOG=debug\nASSISTANT_LANG=fr\nSEARCH_API_KEY=sk-in-a-file\n");

    const res = await box.run(["config", "env", "list"], { env: { ASSISTANT_PORT: "4100" } });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).not.toContain("very-secret");
    expect(res.stdout).not.toContain("sk-in-a-file");
    expect(res.stdout).toMatch(/^ASSISTANT_LOG=debug +\(assistant\.env\)$/m);
    expect(res.stdout).toMatch(/^ASSISTANT_PORT=4100 +\(environment\)$/m);
    expect(res.stdout).toMatch(/^ASSISTANT_BIND=127\.0\.0\.1 +\(default\)$/m);
    expect(res.stdout).toMatch(/^ASSISTANT_MESSAGE_WEBHOOK_URL +\(unset\)$/m);
    expect(res.stdout).toMatch(
      /^ASSISTANT_LLM_TIMEOUT_SECS +\(default: global\.default_timeout_secs of llm_router\.yaml/m,
    );
    expect(res.stdout).toMatch(/^SEARCH_API_KEY=\*{8} +\(assistant\.env\)$/m);
    expect(res.stdout).toMatch(/^ASSISTANT_CHANNEL_A_ENABLED=1 +\(connectors\.env\) +not read by this version$/m);
    expect(res.stdout).toMatch(/^CHANNEL_A_BOT_TOKEN=\*{8} +\(connectors\.env\) +not a setting of this version$/m);
    expect(res.stderr).toContain(
      "warning: CHANNEL_A_BOT_TOKEN looks like a secret; move it to the vault (`assistant vault set channel_a_bot_token`)",
    );
    expect(res.stderr).toContain("warning: SEARCH_API_KEY looks like a secret");

    const json = await box.run(["config", "env", "list", "--json"]);
    // biome-ignore lint/suspicious/noExplicitAny: tests inspect the JSON loosely
    const variables: any[] = json.json().variables;
    const byKey = new Map(variables.map((v) => [v.key, v]));
    // Every variable of the registry is listed, in registry order, then the others that are set.
    expect(variables.slice(0, SETTING_KEYS.length).map((v) => v.key)).toEqual(
      SETTING_KEYS.map((key) => ENV_VARIABLES[key].name),
    );
    expect(byKey.get("ASSISTANT_LOG")).toEqual({
      key: "ASSISTANT_LOG",
      value: "debug",
      source: "assistant.env",
      secret: false,
      kind: "setting",
      default: "info",
      allowed: "one of trace, debug, info, warn, error",
      meaning: "log level of logs/daemon.log",
      domain: "daemon",
      doc: "docs/http-api.md",
      problem: null,
    });
    expect(byKey.get("ASSISTANT_PORT")).toMatchObject({ value: "3876", source: "default" });
    expect(byKey.get("ASSISTANT_LANG")).toMatchObject({ value: "fr", source: "assistant.env", kind: "setting" });
    expect(byKey.get("ASSISTANT_CHANNEL_A_ENABLED")).toMatchObject({ value: "1", kind: "planned" });
    expect(byKey.get("CHANNEL_A_BOT_TOKEN")).toMatchObject({ value: "********", secret: true, kind: "unknown" });
    expect(variables.map((v) => v.key)).not.toContain("PATH"); // only registered names come from the environment
  });

  it("flags a value the daemon would refuse, with the same reason", async () => {
    const box = sandbox();
    mkdirSync(box.dataDir);
    writeFileSync(box.file("assistant.env"), "ASSISTANT_MAX_TOOL_ROUNDS=lots\n");
    const res = await box.run(["config", "env", "list"]);
    expect(res.stdout).toMatch(
      /^ASSISTANT_MAX_TOOL_ROUNDS=lots +\(assistant\.env\) +invalid: must be a whole number from 1 to 100 \(got "lots"\)$/m,
    );
  });
});
