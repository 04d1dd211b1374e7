import { rmSync } from "node:fs";
import type { DataPaths } from "../config/paths.ts";
import { AppError } from "../util/errors.ts";
import { type LockOptions, withFileLock } from "../util/fileLock.ts";
import {
  type Keyring,
  KeyringUnavailable,
  type KeySourceKind,
  keyringAccount,
  keySourceFor,
  MASTER_KEY_ENV,
  masterKeyFrom,
  osKeyring,
} from "./keySource.ts";
import { seal, unseal } from "./seal.ts";
import { keyOpens, sealKeyCheck } from "./vault.ts";
import { readVaultFile, type VaultDocument, writeVaultFile } from "./vaultFile.ts";

// Moves an existing vault to another key source. The order makes a crash at any point harmless: the new key is
// settled first (vault.key or the keyring entry, both durable before anything else changes), every secret is
// re-sealed into a new document written to a temp file and renamed over vault.json (writeVaultFile), and only
// then is the old source removed. Until the rename the vault opens with the old source; from it on, with the new.

/** The steps, in order, reported to `onStep` as each completes (the CLI prints nothing per step; tests pause here). */
export type RekeyStep = "old_key_opened" | "new_key_ready" | "vault_rewritten" | "old_source_removed";

export interface RekeyOptions {
  paths: Pick<DataPaths, "vaultFile" | "vaultKey">;
  to: KeySourceKind;
  /** Where ASSISTANT_VAULT_MASTER_KEY is read from: the old key when moving from it, the new one when moving to it. */
  env: NodeJS.ProcessEnv;
  keyring?: Keyring;
  lock?: LockOptions;
  onStep?: (step: RekeyStep) => void;
}

export interface RekeyResult {
  from: KeySourceKind;
  to: KeySourceKind;
  count: number;
  /** What still needs the person: the master key to remove from the environment, a keyring entry left behind. */
  notes: string[];
}

export async function rekeyVault(options: RekeyOptions): Promise<RekeyResult> {
  const { paths, to, env } = options;
  const file = paths.vaultFile;
  const keyring = options.keyring ?? osKeyring();
  const step = options.onStep ?? (() => {});
  const source = (kind: KeySourceKind) =>
    keySourceFor(kind, { env, keyFile: paths.vaultKey, vaultFile: file, keyring });
  return withFileLock(
    `${file}.lock`,
    () => {
      const doc = readVaultFile(file);
      if (!doc) {
        throw new AppError(
          "not_found",
          `there is no vault at ${file} yet; a new vault takes its key source from the environment (docs/security.md)`,
        );
      }
      const from = doc.key_source;
      if (from === to) throw new AppError("invalid_request", `${file} already uses ${sourceName(to, paths)}`);
      if ((from === "master_key" || to === "master_key") && masterKeyFrom(env) === undefined) {
        const role = from === "master_key" ? "the vault's current master key" : "the new passphrase";
        throw new AppError("invalid_request", `set ${MASTER_KEY_ENV} to ${role} for this command; nothing was changed`);
      }
      const oldKey = source(from).unlock(doc.kdf);
      if (!keyOpens(oldKey, doc)) {
        throw new AppError(
          "vault_locked",
          `the current key (${sourceName(from, paths)}) does not open ${file}; nothing was changed`,
        );
      }
      const values = [...doc.secrets].map(([name, entry]) => {
        const value = unseal(oldKey, entry, name);
        if (value === undefined) {
          throw new AppError(
            "internal",
            `${file}: the entry "${name}" failed authentication; delete or set it again before rekeying (nothing was changed)`,
          );
        }
        return [name, value, entry.updated_at] as const;
      });
      step("old_key_opened");

      let created: ReturnType<ReturnType<typeof source>["create"]>;
      try {
        created = source(to).create();
      } catch (error) {
        if (error instanceof KeyringUnavailable) {
          throw new AppError("vault_locked", `${error.message}; the vault was left as it was`);
        }
        throw error;
      }
      step("new_key_ready");

      const next: VaultDocument = {
        key_source: to,
        ...(created.kdf ? { kdf: created.kdf } : {}),
        key_check: sealKeyCheck(created.key),
        secrets: new Map(
          values.map(([name, value, updatedAt]) => [
            name,
            { ...seal(created.key, value, name), updated_at: updatedAt },
          ]),
        ),
      };
      writeVaultFile(file, next);
      step("vault_rewritten");

      const notes = removeOldSource(from, paths, keyring);
      step("old_source_removed");
      return { from, to, count: values.length, notes };
    },
    options.lock ?? {},
  );
}

/** Removes what held the old key, now that vault.json no longer needs it; what cannot be removed becomes a note. */
function removeOldSource(
  from: KeySourceKind,
  paths: Pick<DataPaths, "vaultFile" | "vaultKey">,
  keyring: Keyring,
): string[] {
  if (from === "key_file") {
    rmSync(paths.vaultKey, { force: true });
    return [];
  }
  if (from === "master_key") {
    return [
      `remove ${MASTER_KEY_ENV} from the environment of the daemon and of your shell: the vault refuses to open while it is set`,
    ];
  }
  const account = keyringAccount(paths.vaultFile);
  try {
    keyring.delete(account);
    return [];
  } catch (error) {
    return [
      `the old key is still in the OS keyring (service "assistant-vault", account "${account}"): it could not be deleted (${(error as Error).message}); delete it by hand`,
    ];
  }
}

export function sourceName(kind: KeySourceKind, paths: Pick<DataPaths, "vaultKey">): string {
  if (kind === "master_key") return MASTER_KEY_ENV;
  if (kind === "keyring") return "the OS keyring";
  return `the key file ${paths.vaultKey}`;
}
