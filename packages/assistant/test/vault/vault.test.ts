import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { redact } from "../../src/util/redact.ts";
import { MAX_VALUE_BYTES } from "../../src/vault/validate.ts";
import { errorOf, failureOf, modeOf, readVaultJson, removeTempDirs, tempPaths, vaultAt } from "./helpers.ts";

afterEach(removeTempDirs);

describe("Vault basics", () => {
  it("round-trips values, including multi-line ones", async () => {
    const paths = tempPaths();
    const vault = vaultAt(paths);
    const pem = "-----BEGIN KEY-----\nabc\r\ndef\n-----END KEY-----\n";
    await vault.set("cloud_a_api_key", "sk-one");
    await vault.set("pem.key", pem);
    await vault.set("unicode", "päss wörd ✓");
    expect(vault.get("cloud_a_api_key")).toBe("sk-one");
    expect(vault.get("pem.key")).toBe(pem);
    expect(vault.get("unicode")).toBe("päss wörd ✓");
    await vault.set("cloud_a_api_key", "sk-two");
    expect(vault.get("cloud_a_api_key")).toBe("sk-two");
    // a second instance (another process, in effect) sees the same data
    expect(vaultAt(paths).get("pem.key")).toBe(pem);
  });

  it("lists names only, sorted, and never values", async () => {
    const paths = tempPaths();
    const vault = vaultAt(paths);
    expect(vault.list()).toEqual([]);
    await vault.set("zeta", "value-z");
    await vault.set("alpha", "value-a");
    await vault.set("Mid-1.x", "value-m");
    expect(vault.list()).toEqual(["Mid-1.x", "alpha", "zeta"]);
    expect(JSON.stringify(vault.list())).not.toContain("value-");
  });

  it("has, delete and not_found", async () => {
    const vault = vaultAt(tempPaths());
    expect(vault.has("a")).toBe(false);
    expect(errorOf(() => vault.get("a")).code).toBe("not_found");
    expect((await failureOf(() => vault.delete("a"))).code).toBe("not_found");
    await vault.set("a", "1234");
    await vault.set("b", "5678");
    expect(vault.has("a")).toBe(true);
    await vault.delete("a");
    expect(vault.has("a")).toBe(false);
    expect(vault.list()).toEqual(["b"]);
    const missing = errorOf(() => vault.get("a"));
    expect(missing.code).toBe("not_found");
    expect(missing.message).toContain('"a"');
    expect((await failureOf(() => vault.delete("a"))).code).toBe("not_found");
  });

  it("registers values it stores and reads with the redactor", async () => {
    const paths = tempPaths();
    await vaultAt(paths).set("tok", "stored-secret-9f8e7d");
    expect(redact("x stored-secret-9f8e7d y")).toBe("x [REDACTED] y");
    writeFileSync(`${paths.dataDir}/probe`, ""); // unrelated file does not disturb the vault
    expect(vaultAt(paths).get("tok")).toBe("stored-secret-9f8e7d");
  });

  it("keeps a name such as __proto__ as plain data", async () => {
    const paths = tempPaths();
    const vault = vaultAt(paths);
    await vault.set("__proto__", "proto-value");
    await vault.set("constructor", "ctor-value");
    expect(vault.list()).toEqual(["__proto__", "constructor"]);
    expect(vaultAt(paths).get("__proto__")).toBe("proto-value");
    expect(Object.keys(readVaultJson(paths.vaultFile).secrets)).toContain("__proto__");
  });
});

describe("names and values", () => {
  it("rejects invalid names without echoing them", async () => {
    const vault = vaultAt(tempPaths());
    for (const name of ["", "a b", "a/b", "x".repeat(129), "ü", "a:b", "vault://x", "a\nb"]) {
      const error = await failureOf(() => vault.set(name, "value"));
      expect(error.code).toBe("invalid_request");
      expect(error.message).toContain("invalid vault key name");
      expect(errorOf(() => vault.get(name)).code).toBe("invalid_request");
      expect(errorOf(() => vault.has(name)).code).toBe("invalid_request");
      expect((await failureOf(() => vault.delete(name))).code).toBe("invalid_request");
    }
    await vault.set("x".repeat(128), "ok");
    await vault.set("A-z_0.9", "ok");
    expect(vault.list()).toEqual(["A-z_0.9", "x".repeat(128)]);
  });

  it("rejects empty and oversize values, counting UTF-8 bytes", async () => {
    const paths = tempPaths();
    const vault = vaultAt(paths);
    expect((await failureOf(() => vault.set("k", ""))).code).toBe("invalid_request");
    const big = await failureOf(() => vault.set("k", "a".repeat(MAX_VALUE_BYTES + 1)));
    expect(big.code).toBe("invalid_request");
    expect(big.message).toContain(`${MAX_VALUE_BYTES}`);
    expect((await failureOf(() => vault.set("k", "é".repeat(MAX_VALUE_BYTES / 2 + 1)))).code).toBe("invalid_request");
    expect(existsSync(paths.vaultFile)).toBe(false); // nothing written for rejected input
    await vault.set("k", "a".repeat(MAX_VALUE_BYTES));
    expect(vault.get("k")).toHaveLength(MAX_VALUE_BYTES);
  });
});

describe("files", () => {
  it("creates vault.json and vault.key with mode 0600 and leaves no lock or temp file", async () => {
    const paths = tempPaths();
    await vaultAt(paths).set("a", "value");
    expect(modeOf(paths.vaultFile)).toBe(0o600);
    expect(modeOf(paths.vaultKey)).toBe(0o600);
    expect(modeOf(paths.dataDir)).toBe(0o700);
    expect(readFileSync(paths.vaultKey)).toHaveLength(32);
    expect(existsSync(`${paths.vaultFile}.lock`)).toBe(false);
    expect(readdirSync(paths.dataDir).sort()).toEqual(["vault.json", "vault.key"]);
  });

  it("restores mode 0600 when it rewrites a file that was loosened", async () => {
    const paths = tempPaths();
    const vault = vaultAt(paths);
    await vault.set("a", "value");
    chmodSync(paths.vaultFile, 0o644);
    await vault.set("b", "value");
    expect(modeOf(paths.vaultFile)).toBe(0o600);
  });

  it("writes a versioned document with one sealed entry per name", async () => {
    const paths = tempPaths();
    await vaultAt(paths).set("a", "value");
    const json = readVaultJson(paths.vaultFile);
    expect(json.format).toBe("assistant-vault");
    expect(json.version).toBe(1);
    expect(json.key_source).toBe("key_file");
    expect(json.kdf).toBeUndefined();
    const entry = json.secrets.a!;
    expect(Buffer.from(entry.iv, "base64")).toHaveLength(12);
    expect(Buffer.from(entry.tag, "base64")).toHaveLength(16);
    expect(Date.parse(entry.updated_at)).not.toBeNaN();
  });

  it("uses a fresh IV for every encryption", async () => {
    const paths = tempPaths();
    const vault = vaultAt(paths);
    await vault.set("a", "same");
    await vault.set("b", "same");
    const { secrets } = readVaultJson(paths.vaultFile);
    expect(secrets.a!.iv).not.toBe(secrets.b!.iv);
    expect(secrets.a!.data).not.toBe(secrets.b!.data);
  });
});
