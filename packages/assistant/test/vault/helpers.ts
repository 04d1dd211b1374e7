import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type DataPaths, dataPaths } from "../../src/config/paths.ts";
import { Vault, type VaultOptions } from "../../src/vault/vault.ts";

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

/** A vault using the key file (no master key in its environment) unless `env` says otherwise. */
export function vaultAt(paths: DataPaths, env: NodeJS.ProcessEnv = {}, extra: Partial<VaultOptions> = {}): Vault {
  return new Vault({ paths, env, ...extra });
}

export function allFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...allFiles(path));
    else out.push(path);
  }
  return out;
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

export function modeOf(path: string): number {
  return statSync(path).mode & 0o777;
}
