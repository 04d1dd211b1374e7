import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { KEYRING_ENV, MASTER_KEY_ENV } from "../../src/vault/keySource.ts";
import { removeTempDirs, tempPaths } from "./helpers.ts";

// The real CLI as a child process, as a user runs it (tests already run on Node 22).

afterEach(removeTempDirs);

const bin = fileURLToPath(new URL("../../bin/assistant.mjs", import.meta.url));

function cli(dataDir: string, args: string[], options: { input?: string; env?: NodeJS.ProcessEnv } = {}) {
  const env: NodeJS.ProcessEnv = { ...process.env, ASSISTANT_DATA_DIR: dataDir };
  delete env[MASTER_KEY_ENV];
  env[KEYRING_ENV] = "0"; // the key file on every platform (keyring.test.ts covers the keyring)
  Object.assign(env, options.env);
  const result = spawnSync(process.execPath, [bin, "vault", ...args], {
    env,
    input: options.input ?? "",
    encoding: "utf8",
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe("assistant vault (CLI)", () => {
  it("set from stdin (multi-line), get prints the value only, list and list --json show names", () => {
    const { dataDir } = tempPaths();
    const value = "line one\nline two\n\tline three";
    const set = cli(dataDir, ["set", "channel_a_bot_token"], { input: `${value}\n` });
    expect(set.code, set.stderr).toBe(0);
    expect(set.stderr).not.toContain("shell history");
    expect(set.stdout).toBe("stored channel_a_bot_token\n");

    const get = cli(dataDir, ["get", "channel_a_bot_token"]);
    expect(get.code).toBe(0);
    expect(get.stdout).toBe(`${value}\n`);

    expect(cli(dataDir, ["set", "search_api_key"], { input: "abc" }).code).toBe(0);
    const list = cli(dataDir, ["list"]);
    expect(list.stdout).toBe("channel_a_bot_token\nsearch_api_key\n");
    const json = cli(dataDir, ["list", "--json"]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ names: ["channel_a_bot_token", "search_api_key"] });
    expect(json.stdout).not.toContain("line one");
  });

  it("set with a value argument works and warns about shell history", () => {
    const { dataDir } = tempPaths();
    const set = cli(dataDir, ["set", "k", "v-on-command-line"]);
    expect(set.code).toBe(0);
    expect(set.stderr).toContain("shell history");
    expect(set.stderr).not.toContain("v-on-command-line");
    expect(cli(dataDir, ["get", "k"]).stdout).toBe("v-on-command-line\n");
  });

  it("get or delete of a missing key: exit 1 and a clear message on stderr", () => {
    const { dataDir } = tempPaths();
    const get = cli(dataDir, ["get", "nope"]);
    expect(get.code).toBe(1);
    expect(get.stdout).toBe("");
    expect(get.stderr).toContain('no secret named "nope"');
    expect(cli(dataDir, ["set", "k"], { input: "v" }).code).toBe(0);
    expect(cli(dataDir, ["delete", "k"]).stdout).toBe("deleted k\n");
    const again = cli(dataDir, ["delete", "k"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('no secret named "k"');
  });

  it("bad names and empty values: exit 1, nothing written", () => {
    const { dataDir, vaultFile } = tempPaths();
    for (const args of [
      ["set", "bad name"],
      ["set", "a/b", "v"],
      ["get", "bad name"],
      ["delete", "x".repeat(129)],
    ]) {
      const result = cli(dataDir, args, { input: "value" });
      expect(result.code, args.join(" ")).toBe(1);
      expect(result.stderr).toContain("invalid vault key name");
    }
    const empty = cli(dataDir, ["set", "k"], { input: "\n" });
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain("empty");
    expect(existsSync(vaultFile)).toBe(false);
  });

  it("empty vault, usage errors and a wrong master key", () => {
    const { dataDir } = tempPaths();
    expect(cli(dataDir, ["list"]).stdout).toBe("(the vault is empty)\n");
    expect(JSON.parse(cli(dataDir, ["list", "--json"]).stdout)).toEqual({ names: [] });
    expect(cli(dataDir, ["get"]).code).toBe(2); // missing argument is a usage error
    expect(cli(dataDir, ["set", "k"], { input: "v", env: { [MASTER_KEY_ENV]: "right" } }).code).toBe(0);
    const wrong = cli(dataDir, ["get", "k"], { env: { [MASTER_KEY_ENV]: "wrong" } });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain("the vault master key does not match");
    expect(cli(dataDir, ["get", "k"], { env: { [MASTER_KEY_ENV]: "right" } }).stdout).toBe("v\n");
  });
});
