import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { type DataPaths, dataPaths } from "../../src/config/paths.ts";
import { AppError } from "../../src/util/errors.ts";
import { KEYRING_ENV, type Keyring } from "../../src/vault/keySource.ts";
import { Vault, type VaultOptions } from "../../src/vault/vault.ts";

export { modeOf } from "../helpers/system.ts";

// Shared by the vault tests: a fresh data directory per test, and a walk over every file in it.

const made: string[] = [];

export function tempPaths(): DataPaths {
  const dir = mkdtempSync(join(tmpdir(), "assistant-vault-"));
  made.push(dir);
  return dataPaths(join(dir, "data")); // not created yet: the vault must create it
}

export function removeTempDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/**
 * A vault using the key file (no master key, and the OS keyring off, so macOS and Windows behave as Linux) unless
 * `env` says otherwise.
 */
export function vaultAt(paths: DataPaths, env: NodeJS.ProcessEnv = {}, extra: Partial<VaultOptions> = {}): Vault {
  return new Vault({ paths, env: { [KEYRING_ENV]: "0", ...env }, ...extra });
}

export { filesAtRest } from "../helpers/files.ts";

/** The AppError `fn` throws (fails the test when it throws something else or nothing). */
export function errorOf(fn: () => unknown): AppError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }
  throw new Error("expected an error");
}

/** The AppError `fn` throws or its promise rejects with (fails the test when it is something else or nothing). */
export async function failureOf(fn: () => unknown): Promise<AppError> {
  try {
    await fn();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }
  throw new Error("expected an error");
}

export interface VaultJson {
  format: string;
  version: number;
  key_source: string;
  kdf?: { name: string; salt: string; N: number; r: number; p: number };
  key_check: { iv: string; tag: string; data: string };
  secrets: Record<string, { iv: string; tag: string; data: string; updated_at: string }>;
}

export function readVaultJson(path: string): VaultJson {
  return JSON.parse(readFileSync(path, "utf8")) as VaultJson;
}

/** A keyring in memory that counts calls and can be told to fail. */
export function standIn() {
  const entries = new Map<string, string>();
  const calls = { read: 0, write: 0 };
  const fail = { read: false, write: false };
  const keyring: Keyring = {
    read: (account) => {
      calls.read++;
      if (fail.read) throw new Error("org.freedesktop.DBus.Error.ServiceUnknown: no secret service");
      return entries.get(account) ?? null;
    },
    write: (account, password) => {
      calls.write++;
      if (fail.write) throw new Error("Platform failure: the collection is locked");
      entries.set(account, password);
    },
    delete: (account) => entries.delete(account),
  };
  return { keyring, entries, calls, fail };
}
