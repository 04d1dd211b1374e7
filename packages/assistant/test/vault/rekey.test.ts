import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import type { DataPaths } from "../../src/config/paths.ts";
import { KEYRING_ENV, type KeySourceKind, keyringAccount, MASTER_KEY_ENV } from "../../src/vault/keySource.ts";
import { type RekeyStep, rekeyVault } from "../../src/vault/rekey.ts";
import { readVaultJson, removeTempDirs, standIn, tempPaths, vaultAt } from "./helpers.ts";

// `assistant vault rekey`: every secret survives a move between key sources, the old source goes only once the new
// vault is in place, and a kill -9 at any step leaves a vault that opens with the old or the new source.

afterEach(removeTempDirs);

const bin = fileURLToPath(new URL("../../bin/assistant.mjs", import.meta.url));
const pauser = fileURLToPath(new URL("./fixtures/rekeyPause.ts", import.meta.url));
const PASSPHRASE = "correct horse battery staple";
const SECRETS = Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`secret_${i}`, `value ${i}\nline two ${i}`]));

function baseEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, [KEYRING_ENV]: "0", ...extra };
  if (!extra[MASTER_KEY_ENV]) delete env[MASTER_KEY_ENV];
  return env;
}

function cli(dataDir: string, args: string[], extra: NodeJS.ProcessEnv = {}) {
  const result = spawnSync(process.execPath, [bin, "vault", ...args], {
    env: { ...baseEnv(extra), ASSISTANT_DATA_DIR: dataDir },
    input: "",
    encoding: "utf8",
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

async function fill(paths: DataPaths, env: NodeJS.ProcessEnv = {}): Promise<void> {
  const vault = vaultAt(paths, env);
  for (const [name, value] of Object.entries(SECRETS)) await vault.set(name, value);
}

/** Every secret, read through a fresh vault in `env`. */
function readAll(paths: DataPaths, env: NodeJS.ProcessEnv): Record<string, string> {
  const vault = vaultAt(paths, env);
  return Object.fromEntries(vault.list().map((name) => [name, vault.get(name)]));
}

describe("assistant vault rekey (CLI)", () => {
  it("key-file to master-key and back: every secret kept, vault.key removed, the advice printed", () => {
    const { dataDir, vaultFile, vaultKey } = tempPaths();
    expect(cli(dataDir, ["set", "cloud_a_api_key", "x"]).code).toBe(0);
    expect(cli(dataDir, ["set", "search_api_key", "s3cr3t"]).code).toBe(0);
    expect(existsSync(vaultKey)).toBe(true);

    // The bug this fixes: with the master key set, a key-file vault refuses and says how to move it.
    const refused = cli(dataDir, ["get", "search_api_key"], { [MASTER_KEY_ENV]: PASSPHRASE });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("assistant vault rekey --to master-key");

    const moved = cli(dataDir, ["rekey", "--to", "master-key"], { [MASTER_KEY_ENV]: PASSPHRASE });
    expect(moved.code, moved.stderr).toBe(0);
    expect(moved.stdout).toContain(`moved the vault (2 secrets) from the key file ${vaultKey} to ${MASTER_KEY_ENV}`);
    expect(moved.stdout).toContain("restart the daemon with ASSISTANT_VAULT_MASTER_KEY set");
    expect(existsSync(vaultKey)).toBe(false);
    expect(readVaultJson(vaultFile).key_source).toBe("master_key");
    expect(readFileSync(vaultFile, "utf8")).not.toContain("s3cr3t");
    expect(cli(dataDir, ["get", "search_api_key"], { [MASTER_KEY_ENV]: PASSPHRASE }).stdout).toBe("s3cr3t\n");
    expect(cli(dataDir, ["get", "search_api_key"], { [MASTER_KEY_ENV]: "wrong" }).code).toBe(1);

    const back = cli(dataDir, ["rekey", "--to", "key-file"], { [MASTER_KEY_ENV]: PASSPHRASE });
    expect(back.code, back.stderr).toBe(0);
    expect(back.stdout).toContain(`next: remove ${MASTER_KEY_ENV} from the environment`);
    expect(readVaultJson(vaultFile).key_source).toBe("key_file");
    expect(cli(dataDir, ["get", "search_api_key"]).stdout).toBe("s3cr3t\n");
  });

  it("refuses clearly: no vault, the same source, no master key, an unknown --to (exit 2 with the choices)", () => {
    const { dataDir } = tempPaths();
    const none = cli(dataDir, ["rekey", "--to", "master-key"], { [MASTER_KEY_ENV]: PASSPHRASE });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("there is no vault at");
    expect(cli(dataDir, ["set", "k", "v"]).code).toBe(0);
    const same = cli(dataDir, ["rekey", "--to", "key-file"]);
    expect(same.code).toBe(1);
    expect(same.stderr).toContain("already uses the key file");
    const noKey = cli(dataDir, ["rekey", "--to", "master-key"]);
    expect(noKey.code).toBe(1);
    expect(noKey.stderr).toContain(`set ${MASTER_KEY_ENV} to the new passphrase for this command; nothing was changed`);
    const typo = cli(dataDir, ["rekey", "--to", "masterkey"]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("expected master-key, key-file, keyring");
    expect(cli(dataDir, ["get", "k"]).stdout).toBe("v\n");
  });
});

describe("rekeyVault", () => {
  it("moves a key-file vault into the keyring and out again, deleting each old key", async () => {
    const paths = tempPaths();
    await fill(paths);
    const { keyring, entries } = standIn();
    const account = keyringAccount(paths.vaultFile);
    const steps: RekeyStep[] = [];
    const done = await rekeyVault({ paths, to: "keyring", env: {}, keyring, onStep: (step) => steps.push(step) });
    expect(done).toEqual({ from: "key_file", to: "keyring", count: 25, notes: [] });
    expect(steps).toEqual(["old_key_opened", "new_key_ready", "vault_rewritten", "old_source_removed"]);
    expect(existsSync(paths.vaultKey)).toBe(false);
    expect(entries.has(account)).toBe(true);
    const inKeyring = vaultAt(paths, {}, { keyring });
    for (const [name, value] of Object.entries(SECRETS)) expect(inKeyring.get(name)).toBe(value);

    await rekeyVault({ paths, to: "key_file", env: {}, keyring });
    expect(entries.has(account)).toBe(false);
    expect(readAll(paths, {})).toEqual(SECRETS);
  });

  it("leaves the vault alone when the new source cannot be made", async () => {
    const paths = tempPaths();
    await fill(paths);
    const before = readFileSync(paths.vaultFile, "utf8");
    const { keyring, fail } = standIn();
    fail.write = true;
    const error = await rekeyVault({ paths, to: "keyring", env: {}, keyring }).catch((e: unknown) => e);
    expect(String(error)).toContain("storing the key in the OS keyring failed");
    expect(readFileSync(paths.vaultFile, "utf8")).toBe(before);
    expect(existsSync(paths.vaultKey)).toBe(true);
  });
});

describe("rekey killed with SIGKILL at each step", () => {
  const moves: [KeySourceKind, KeySourceKind][] = [
    ["key_file", "master_key"],
    ["master_key", "key_file"],
  ];
  const steps: RekeyStep[] = ["old_key_opened", "new_key_ready", "vault_rewritten"];
  for (const [from, to] of moves) {
    for (const pauseAt of steps) {
      it(`${from} -> ${to}, killed after ${pauseAt}: the vault opens with the old or the new source`, async () => {
        const paths = tempPaths();
        const masterEnv = { [MASTER_KEY_ENV]: PASSPHRASE };
        await fill(paths, from === "master_key" ? masterEnv : {});
        const child = spawn(process.execPath, [pauser, paths.dataDir, to, pauseAt], { env: baseEnv(masterEnv) });
        let out = "";
        let err = "";
        child.stderr.on("data", (chunk) => {
          err += chunk;
        });
        await new Promise<void>((resolve, reject) => {
          child.stdout.on("data", (chunk) => {
            out += chunk;
            if (out.includes(`${pauseAt}\n`)) resolve();
          });
          child.on("exit", (code) => reject(new Error(`the rekey exited ${code} before ${pauseAt}: ${err}`)));
        });
        const exited = new Promise((resolve) => child.on("exit", resolve));
        child.kill("SIGKILL");
        await exited;

        const after = readVaultJson(paths.vaultFile).key_source;
        expect(after).toBe(pauseAt === "vault_rewritten" ? to : from);
        // The source vault.json records opens it, with every secret.
        expect(readAll(paths, after === "master_key" ? masterEnv : {})).toEqual(SECRETS);
        // And a second rekey finishes the move (the lock left by the killed process is taken over).
        if (after === from) {
          await rekeyVault({ paths, to, env: masterEnv, lock: { timeoutMs: 15_000 } });
          expect(readAll(paths, to === "master_key" ? masterEnv : {})).toEqual(SECRETS);
        }
      });
    }
  }
});
