import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { KEYRING_ENV, type Keyring, keyringWanted, keySourceKind, MASTER_KEY_ENV } from "../../src/vault/keySource.ts";
import { errorOf, failureOf, readVaultJson, removeTempDirs, standIn, tempPaths, vaultAt } from "./helpers.ts";

// The keyring key source against a stand-in keyring (the real one is exercised by keyring.test.ts): which source
// a new vault gets, the fallback to vault.key, and the refusals for an existing keyring vault.

afterEach(removeTempDirs);

const ON = { [KEYRING_ENV]: "1" };

function withKeyring(paths: ReturnType<typeof tempPaths>, keyring: Keyring, env: NodeJS.ProcessEnv = ON) {
  const warnings: string[] = [];
  const vault = vaultAt(paths, env, { keyring, onWarning: (message) => warnings.push(message) });
  return { vault, warnings };
}

describe("which key source a new vault gets", () => {
  it("ASSISTANT_VAULT_KEYRING: 1 on, 0 off, unset on only on macOS and Windows; the master key wins", () => {
    expect(keyringWanted(ON, "linux")).toBe(true);
    expect(keyringWanted({ [KEYRING_ENV]: "0" }, "darwin")).toBe(false);
    expect(keyringWanted({ [KEYRING_ENV]: "0" }, "win32")).toBe(false);
    expect(keyringWanted({}, "linux")).toBe(false);
    expect(keyringWanted({ [KEYRING_ENV]: "" }, "linux")).toBe(false);
    expect(keyringWanted({}, "darwin")).toBe(true);
    expect(keyringWanted({}, "win32")).toBe(true);
    expect(keySourceKind(ON, "linux")).toBe("keyring");
    expect(keySourceKind({ ...ON, [MASTER_KEY_ENV]: "mk" }, "linux")).toBe("master_key");
    const bad = errorOf(() => keyringWanted({ [KEYRING_ENV]: "yes" }, "linux"));
    expect(bad.code).toBe("config_invalid");
    expect(bad.message).toContain(`${KEYRING_ENV}: must be 1 or 0 (got "yes")`);
  });

  it("an invalid ASSISTANT_VAULT_KEYRING stops a new vault before anything is written", async () => {
    const paths = tempPaths();
    const { keyring, calls } = standIn();
    const { vault } = withKeyring(paths, keyring, { [KEYRING_ENV]: "true" });
    expect((await failureOf(() => vault.set("a", "b"))).code).toBe("config_invalid");
    expect(existsSync(paths.vaultFile)).toBe(false);
    expect(existsSync(paths.vaultKey)).toBe(false);
    expect(calls.write).toBe(0);
  });

  it("does not load the native keyring module to list, check or use a key-file vault", async () => {
    const paths = tempPaths();
    const vault = vaultAt(paths, ON);
    await vaultAt(paths).set("a", "file-backed");
    expect(vault.list()).toEqual(["a"]);
    expect(vault.has("a")).toBe(true);
    expect(vault.get("a")).toBe("file-backed");
    expect(vault.status()).toMatchObject({ source: "key_file", key_ok: true });
    const loaded = Object.keys(createRequire(import.meta.url).cache);
    expect(loaded.filter((file) => file.includes("@napi-rs"))).toEqual([]);
  });
});

describe("a new vault in the keyring", () => {
  it("stores 32 random bytes under the vault's absolute path, records key_source keyring, no vault.key", async () => {
    const paths = tempPaths();
    const { keyring, entries } = standIn();
    const { vault, warnings } = withKeyring(paths, keyring);
    expect(vault.keySource).toBe("keyring");
    await vault.set("cloud_a_api_key", "sk-in-keyring");
    expect(warnings).toEqual([]);
    expect(existsSync(paths.vaultKey)).toBe(false);
    expect([...entries.keys()]).toEqual([resolve(paths.vaultFile)]);
    const stored = entries.get(resolve(paths.vaultFile))!;
    expect(Buffer.from(stored, "base64")).toHaveLength(32);
    const json = readVaultJson(paths.vaultFile);
    expect(json.key_source).toBe("keyring");
    expect(json.kdf).toBeUndefined();
    expect(readFileSync(paths.vaultFile, "utf8")).not.toContain(stored);
    // another process: the recorded source is used, whatever ASSISTANT_VAULT_KEYRING says now
    expect(withKeyring(paths, keyring, {}).vault.get("cloud_a_api_key")).toBe("sk-in-keyring");
    expect(withKeyring(paths, keyring, { [KEYRING_ENV]: "0" }).vault.status()).toMatchObject({
      source: "keyring",
      created_with: "keyring",
      key_ok: true,
      count: 1,
    });
  });

  it("asks the keyring once per process", async () => {
    const paths = tempPaths();
    const { keyring, calls } = standIn();
    await withKeyring(paths, keyring).vault.set("a", "1");
    const { vault } = withKeyring(paths, keyring);
    const before = calls.read;
    await vault.set("b", "2");
    expect(vault.get("a")).toBe("1");
    expect(vault.get("b")).toBe("2");
    await vault.delete("a");
    expect(calls.read - before).toBe(1);
    expect(calls.write).toBe(1); // only when the vault was created
  });

  it("reuses an entry an earlier vault at this path left, and never overwrites it", async () => {
    const paths = tempPaths();
    const { keyring, entries, calls } = standIn();
    await withKeyring(paths, keyring).vault.set("a", "old vault");
    const old = readFileSync(paths.vaultFile);
    const key = entries.get(resolve(paths.vaultFile));
    rmSync(paths.vaultFile); // moved aside, to start an empty vault
    await withKeyring(paths, keyring).vault.set("b", "new vault");
    expect(calls.write).toBe(1);
    expect(entries.get(resolve(paths.vaultFile))).toBe(key);
    // the moved-aside vault still opens with the same entry
    writeFileSync(paths.vaultFile, old);
    expect(withKeyring(paths, keyring).vault.get("a")).toBe("old vault");
  });
});

describe("falling back to vault.key when the keyring fails", () => {
  it("unreachable keyring: a key-file vault that records why, one warning, nothing lost", async () => {
    const paths = tempPaths();
    const { keyring, fail, calls } = standIn();
    fail.read = true;
    const { vault, warnings } = withKeyring(paths, keyring);
    await vault.set("a", "value");
    await vault.set("b", "value 2");
    expect(calls.write).toBe(0);
    expect(existsSync(paths.vaultKey)).toBe(true);
    const json = readVaultJson(paths.vaultFile) as ReturnType<typeof readVaultJson> & { keyring_fallback?: string };
    expect(json.key_source).toBe("key_file");
    expect(json.keyring_fallback).toContain(
      "the OS keyring cannot be reached (org.freedesktop.DBus.Error.ServiceUnknown",
    );
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("cannot be reached");
    expect(warnings[0]).toContain(paths.vaultKey);
    expect(vault.status()).toMatchObject({
      source: "key_file",
      key_ok: true,
      keyring_fallback: json.keyring_fallback,
    });
    // the keyring works again later: the vault stays on vault.key (it records its source)
    fail.read = false;
    expect(withKeyring(paths, keyring).vault.get("a")).toBe("value");
  });

  it("a failed write or a read-back that differs falls back too", async () => {
    for (const problem of ["write", "readback"] as const) {
      const paths = tempPaths();
      const { keyring, fail } = standIn();
      if (problem === "write") fail.write = true;
      const lying: Keyring =
        problem === "readback"
          ? { ...keyring, read: (account) => (keyring.read(account) ? "bm90IGl0" : null) }
          : keyring;
      const { vault, warnings } = withKeyring(paths, lying);
      await vault.set("a", "value");
      expect(readVaultJson(paths.vaultFile).key_source).toBe("key_file");
      expect(warnings[0]).toContain(
        problem === "write" ? "storing the key in the OS keyring failed" : "did not return the key it was given",
      );
      expect(vault.get("a")).toBe("value");
    }
  });

  it("an entry at this path that is not a vault key is left alone", async () => {
    const paths = tempPaths();
    const { keyring, entries } = standIn();
    entries.set(resolve(paths.vaultFile), "someone else's password");
    const { vault, warnings } = withKeyring(paths, keyring);
    await vault.set("a", "value");
    expect(entries.get(resolve(paths.vaultFile))).toBe("someone else's password");
    expect(readVaultJson(paths.vaultFile).key_source).toBe("key_file");
    expect(warnings[0]).toContain("is not a vault key; it was left alone");
  });
});

describe("an existing keyring vault that cannot be opened", () => {
  async function keyringVault() {
    const paths = tempPaths();
    const kr = standIn();
    await withKeyring(paths, kr.keyring).vault.set("a", "value");
    return { paths, ...kr, before: readFileSync(paths.vaultFile) };
  }

  async function expectRefused(
    paths: ReturnType<typeof tempPaths>,
    keyring: Keyring,
    before: Buffer,
    text: string,
    env: NodeJS.ProcessEnv = ON,
  ) {
    const { vault } = withKeyring(paths, keyring, env);
    for (const attempt of [
      () => vault.get("a"),
      () => vault.set("a", "x"),
      () => vault.set("b", "x"),
      () => vault.delete("a"),
    ]) {
      const error = await failureOf(attempt);
      expect(error.code).toBe("vault_locked");
      expect(error.message).toContain(text);
      expect(error.message).toContain("nothing was changed");
    }
    expect(readFileSync(paths.vaultFile).equals(before)).toBe(true);
    expect(existsSync(paths.vaultKey)).toBe(false);
    expect(vault.list()).toEqual(["a"]);
    expect(vault.status()).toMatchObject({ source: "keyring", key_ok: false });
  }

  it("entry missing (another keyring or session): vault_locked naming the entry, file unchanged", async () => {
    const { paths, keyring, entries, before } = await keyringVault();
    const key = entries.get(resolve(paths.vaultFile))!;
    entries.clear();
    await expectRefused(paths, keyring, before, "the keyring has no such entry");
    await expectRefused(paths, keyring, before, `account "${resolve(paths.vaultFile)}"`);
    const { vault } = withKeyring(paths, keyring);
    expect(errorOf(() => vault.get("a")).message).not.toContain(key);
    expect(entries.size).toBe(0); // never re-created
  });

  it("keyring unreachable, entry damaged or replaced: vault_locked, file unchanged", async () => {
    const { paths, keyring, entries, fail, before } = await keyringVault();
    fail.read = true;
    await expectRefused(
      paths,
      keyring,
      before,
      "the keyring cannot be reached (org.freedesktop.DBus.Error.ServiceUnknown",
    );
    fail.read = false;
    entries.set(resolve(paths.vaultFile), "not a key");
    await expectRefused(paths, keyring, before, "is not a 32-byte vault key");
    entries.set(resolve(paths.vaultFile), Buffer.alloc(32, 9).toString("base64"));
    await expectRefused(paths, keyring, before, "the key in the OS keyring does not match");
  });

  it("a master key in the environment does not open a keyring vault", async () => {
    const { paths, keyring, before } = await keyringVault();
    await expectRefused(paths, keyring, before, `${MASTER_KEY_ENV} is set`, { [MASTER_KEY_ENV]: "mk" });
  });

  it("vault.json naming keyring_fallback on anything but a key-file vault is damaged", async () => {
    const { paths, keyring } = await keyringVault();
    const json = { ...readVaultJson(paths.vaultFile), keyring_fallback: "x" };
    writeFileSync(paths.vaultFile, JSON.stringify(json));
    const error = errorOf(() => withKeyring(paths, keyring).vault.get("a"));
    expect(error.code).toBe("config_invalid");
    expect(error.message).toContain("keyring_fallback");
  });
});
