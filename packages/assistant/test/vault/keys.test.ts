import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { keyFileModeOk, keySourceKind, MASTER_KEY_ENV } from "../../src/vault/keySource.ts";
import { errorOf, failureOf, filesAtRest, readVaultJson, removeTempDirs, tempPaths, vaultAt } from "./helpers.ts";

afterEach(removeTempDirs);

const master = (key: string) => ({ [MASTER_KEY_ENV]: key });

describe("key sources", () => {
  it("uses vault.key when no master key is set, and the master key through scrypt when it is", async () => {
    expect(keySourceKind({}, "linux")).toBe("key_file");
    expect(keySourceKind({ [MASTER_KEY_ENV]: "" }, "linux")).toBe("key_file"); // empty counts as unset
    expect(keySourceKind(master("x"))).toBe("master_key");

    const filePaths = tempPaths();
    const fileVault = vaultAt(filePaths);
    expect(fileVault.keySource).toBe("key_file");
    await fileVault.set("a", "from-file");
    expect(existsSync(filePaths.vaultKey)).toBe(true);
    expect(readVaultJson(filePaths.vaultFile).kdf).toBeUndefined();

    const kdfPaths = tempPaths();
    const kdfVault = vaultAt(kdfPaths, master("correct horse battery staple"));
    expect(kdfVault.keySource).toBe("master_key");
    await kdfVault.set("a", "from-master");
    expect(existsSync(kdfPaths.vaultKey)).toBe(false); // no key file when a master key is used
    const json = readVaultJson(kdfPaths.vaultFile);
    expect(json.key_source).toBe("master_key");
    expect(json.kdf).toMatchObject({ name: "scrypt", N: 65536, r: 8, p: 1 });
    expect(Buffer.from(json.kdf!.salt, "base64")).toHaveLength(16);
    // a fresh instance (new process) derives the same key from the stored salt
    expect(vaultAt(kdfPaths, master("correct horse battery staple")).get("a")).toBe("from-master");
  });

  it("gives the same vault.key to every instance and reuses an existing one", async () => {
    const paths = tempPaths();
    await vaultAt(paths).set("a", "one");
    const key = readFileSync(paths.vaultKey);
    rmSync(paths.vaultFile);
    await vaultAt(paths).set("b", "two"); // a new vault.json, the same key file
    expect(readFileSync(paths.vaultKey).equals(key)).toBe(true);
    expect(vaultAt(paths).get("b")).toBe("two");
  });

  it("reports vault.key permissions for doctor", async () => {
    const paths = tempPaths();
    expect(keyFileModeOk(paths.vaultKey)).toBeUndefined();
    const vault = vaultAt(paths);
    expect(vault.status()).toMatchObject({ exists: false, count: 0, source: "key_file", key_file_exists: false });
    await vault.set("a", "value");
    expect(keyFileModeOk(paths.vaultKey)).toBe(true);
    chmodSync(paths.vaultKey, 0o644);
    expect(keyFileModeOk(paths.vaultKey)).toBe(false);
    expect(vault.get("a")).toBe("value"); // still used, doctor warns
    expect(vault.status()).toMatchObject({
      exists: true,
      count: 1,
      source: "key_file",
      created_with: "key_file",
      key_ok: true,
      key_file_mode_ok: false,
    });
  });
});

describe("a key that does not match", () => {
  it("wrong master key: clear vault_locked error and vault.json stays byte-identical", async () => {
    const paths = tempPaths();
    await vaultAt(paths, master("the right key")).set("cloud_a_api_key", "sk-right");
    const before = readFileSync(paths.vaultFile);
    const wrong = vaultAt(paths, master("the wrong key"));
    for (const attempt of [
      () => wrong.get("cloud_a_api_key"),
      () => wrong.get("missing"),
      () => wrong.set("cloud_a_api_key", "sk-overwrite"),
      () => wrong.set("new_key", "value"),
      () => wrong.delete("cloud_a_api_key"),
    ]) {
      const error = await failureOf(attempt);
      expect(error.code).toBe("vault_locked");
      expect(error.message).toContain("the vault master key does not match the one");
      expect(error.message).toContain(paths.vaultFile);
      expect(error.message).not.toContain("the wrong key");
    }
    expect(readFileSync(paths.vaultFile).equals(before)).toBe(true);
    expect(existsSync(paths.vaultKey)).toBe(false);
    expect(existsSync(`${paths.vaultFile}.lock`)).toBe(false);
    expect(wrong.list()).toEqual(["cloud_a_api_key"]); // names need no key
    expect(wrong.status()).toMatchObject({ exists: true, key_ok: false, created_with: "master_key" });
    expect(vaultAt(paths, master("the right key")).get("cloud_a_api_key")).toBe("sk-right");
  });

  it("master-key vault without the master key, and key-file vault with one: refused, unchanged", async () => {
    const mk = tempPaths();
    await vaultAt(mk, master("mk")).set("a", "value");
    const mkBefore = readFileSync(mk.vaultFile);
    const unset = await failureOf(() => vaultAt(mk).set("a", "other"));
    expect(unset.code).toBe("vault_locked");
    expect(unset.message).toContain(`${MASTER_KEY_ENV} is not set`);
    expect(readFileSync(mk.vaultFile).equals(mkBefore)).toBe(true);
    expect(existsSync(mk.vaultKey)).toBe(false); // no key file was created to "fix" it

    const kf = tempPaths();
    await vaultAt(kf).set("a", "value");
    const kfBefore = readFileSync(kf.vaultFile);
    const set = errorOf(() => vaultAt(kf, master("mk")).get("a"));
    expect(set.code).toBe("vault_locked");
    expect(set.message).toContain(`${MASTER_KEY_ENV} is set`);
    expect((await failureOf(() => vaultAt(kf, master("mk")).set("b", "x"))).code).toBe("vault_locked");
    expect(readFileSync(kf.vaultFile).equals(kfBefore)).toBe(true);
  });

  it("missing or replaced vault.key: refused, never regenerated", async () => {
    const paths = tempPaths();
    await vaultAt(paths).set("a", "value");
    const before = readFileSync(paths.vaultFile);
    rmSync(paths.vaultKey);
    const missing = await failureOf(() => vaultAt(paths).set("b", "x"));
    expect(missing.code).toBe("vault_locked");
    expect(missing.message).toContain("which is missing");
    expect(existsSync(paths.vaultKey)).toBe(false);

    writeFileSync(paths.vaultKey, Buffer.alloc(32, 7), { mode: 0o600 });
    const replaced = errorOf(() => vaultAt(paths).get("a"));
    expect(replaced.code).toBe("vault_locked");
    expect(replaced.message).toContain("does not match");

    writeFileSync(paths.vaultKey, "short");
    expect(errorOf(() => vaultAt(paths).get("a")).message).toContain("exactly 32 bytes");
    expect(readFileSync(paths.vaultFile).equals(before)).toBe(true);
  });
});

describe("damaged files", () => {
  it("detects altered ciphertext, tag and IV", async () => {
    for (const field of ["data", "tag", "iv"] as const) {
      const paths = tempPaths();
      await vaultAt(paths).set("a", "some secret value");
      const json = readVaultJson(paths.vaultFile);
      const bytes = Buffer.from(json.secrets.a![field], "base64");
      bytes[0]! ^= 1;
      json.secrets.a![field] = bytes.toString("base64");
      writeFileSync(paths.vaultFile, JSON.stringify(json));
      const error = errorOf(() => vaultAt(paths).get("a"));
      expect(error.message).toContain("failed authentication");
      expect(error.message).toContain(paths.vaultFile);
    }
  });

  it("detects entries swapped between names", async () => {
    const paths = tempPaths();
    const vault = vaultAt(paths);
    await vault.set("a", "value of a");
    await vault.set("b", "value of b");
    const json = readVaultJson(paths.vaultFile);
    [json.secrets.a, json.secrets.b] = [json.secrets.b!, json.secrets.a!];
    writeFileSync(paths.vaultFile, JSON.stringify(json));
    expect(errorOf(() => vault.get("a")).message).toContain('"a" failed authentication');
    expect(errorOf(() => vault.get("b")).message).toContain('"b" failed authentication');
  });

  it("corrupt JSON or a wrong shape is a clear error naming the file, and the file is never replaced", async () => {
    const cases = [
      "{ not json",
      "[]",
      JSON.stringify({ format: "other" }),
      JSON.stringify({ format: "assistant-vault", version: 2 }),
      JSON.stringify({ format: "assistant-vault", version: 1, key_source: "key_file", key_check: {}, secrets: {} }),
      JSON.stringify({
        format: "assistant-vault",
        version: 1,
        key_source: "master_key",
        kdf: { name: "scrypt", salt: Buffer.alloc(16).toString("base64"), N: 2 ** 30, r: 8, p: 1 },
        key_check: { iv: "", tag: "", data: "" },
        secrets: {},
      }),
    ];
    for (const text of cases) {
      const paths = tempPaths();
      await vaultAt(paths).set("seed", "value"); // creates the data dir and vault.key
      writeFileSync(paths.vaultFile, text);
      const vault = vaultAt(paths);
      for (const attempt of [
        () => vault.list(),
        () => vault.get("seed"),
        () => vault.set("a", "b"),
        () => vault.delete("seed"),
      ]) {
        const error = await failureOf(attempt);
        expect(error.code).toBe("config_invalid");
        expect(error.message).toContain(paths.vaultFile);
      }
      expect(readFileSync(paths.vaultFile, "utf8")).toBe(text);
    }
  });
});

describe("nothing in plaintext", () => {
  it("a canary secret and the master key never appear in any file under the data dir", async () => {
    const canary = `CANARY-${Math.random().toString(36).slice(2)}-secret`;
    const masterKey = "master-key-canary-4711";
    for (const env of [{}, master(masterKey)]) {
      const paths = tempPaths();
      const vault = vaultAt(paths, env);
      await vault.set("canary", canary);
      await vault.set("multi", `${canary}\nline two`);
      await vault.set("other", "x");
      await vault.delete("other");
      expect(vault.get("canary")).toBe(canary);
      const needles = [canary, masterKey].flatMap((s) => [
        Buffer.from(s, "utf8"),
        Buffer.from(Buffer.from(s).toString("base64")),
        Buffer.from(Buffer.from(s).toString("hex")),
        Buffer.from(s, "utf16le"),
      ]);
      const files = filesAtRest(paths.dataDir);
      expect(files.length).toBeGreaterThan(0);
      for (const { path: file, bytes } of files) {
        for (const needle of needles) expect(bytes.includes(needle), `${file} contains a secret`).toBe(false);
      }
    }
  });
});
