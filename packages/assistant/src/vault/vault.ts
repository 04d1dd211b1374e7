import type { DataPaths } from "../config/paths.ts";
import { AppError } from "../util/errors.ts";
import { type LockOptions, withFileLock } from "../util/fileLock.ts";
import { registerSecret } from "../util/redact.ts";
import {
  describeKeySource,
  type KdfParams,
  KEYRING_ENV,
  type Keyring,
  KeyringUnavailable,
  type KeySource,
  type KeySourceKind,
  type KeySourceReport,
  keySourceFor,
  keySourceKind,
  MASTER_KEY_ENV,
  masterKeyFrom,
  osKeyring,
} from "./keySource.ts";
import { seal, unseal } from "./seal.ts";
import { assertValidName, assertValidValue } from "./validate.ts";
import { readVaultFile, type VaultDocument, writeVaultFile } from "./vaultFile.ts";

// The vault service: named secrets in vault.json, each sealed with AES-256-GCM under the vault key, the name
// as additional authenticated data. The file is re-read on every call because the CLI and the daemon share
// it; writers serialise on a lock file. Listing needs no key (names are not secret); reading and writing do,
// and a key that does not match the file stops the call before anything is read or changed. A new vault's key
// source is settled (keyring, or vault.key when the keyring fails) before vault.json is written; an existing
// vault always uses the source it records.

const KEY_CHECK_AAD = "vault key check"; // has a space, so it can never be a secret's name
const KEY_CHECK_PLAINTEXT = "assistant-vault-key-check-v1";

/** The key-check value a vault sealed with `key` stores, so a wrong key is caught before anything is read. */
export function sealKeyCheck(key: Buffer): VaultDocument["key_check"] {
  return seal(key, KEY_CHECK_PLAINTEXT, KEY_CHECK_AAD);
}

/** Whether `key` opens `doc` (its key check authenticates). */
export function keyOpens(key: Buffer, doc: VaultDocument): boolean {
  return unseal(key, doc.key_check, KEY_CHECK_AAD) === KEY_CHECK_PLAINTEXT;
}

export interface VaultOptions {
  paths: Pick<DataPaths, "vaultFile" | "vaultKey">;
  /** Where ASSISTANT_VAULT_MASTER_KEY and ASSISTANT_VAULT_KEYRING are read from (default process.env). */
  env?: NodeJS.ProcessEnv;
  lock?: LockOptions;
  /** The OS keyring (default: the platform's, loaded on first use). */
  keyring?: Keyring;
  /** Told when a new vault falls back from the keyring to vault.key (default: a line on standard error). */
  onWarning?: (message: string) => void;
}

export interface VaultStatus extends KeySourceReport {
  /** The existing vault's key source (as created_with), else the one a new vault gets in this environment. */
  source: KeySourceKind;
  file: string;
  exists: boolean;
  count: number;
  /** The key source vault.json was created with (absent while the vault does not exist). */
  created_with?: KeySourceKind;
  /** Whether the current key opens vault.json (absent while the vault does not exist). */
  key_ok?: boolean;
  /** Why the key does not open it, when key_ok is false. */
  key_problem?: string;
  /** Why a vault that wanted the OS keyring uses vault.key instead (recorded in vault.json when it was created). */
  keyring_fallback?: string;
}

export class Vault {
  readonly file: string;
  private readonly keyFile: string;
  private readonly lockFile: string;
  private readonly env: NodeJS.ProcessEnv;
  private readonly lockOptions: LockOptions;
  private readonly keyring: Keyring;
  private readonly onWarning: (message: string) => void;
  private readonly sources = new Map<KeySourceKind, KeySource>();
  /** The keyring key that opened the vault last, by its key check: the keyring is asked once per process. */
  private keyringKey: { check: string; key: Buffer } | undefined;

  constructor(options: VaultOptions) {
    this.file = options.paths.vaultFile;
    this.keyFile = options.paths.vaultKey;
    this.lockFile = `${this.file}.lock`;
    this.env = options.env ?? process.env;
    this.lockOptions = options.lock ?? {};
    this.keyring = options.keyring ?? osKeyring();
    this.onWarning = options.onWarning ?? ((message) => process.stderr.write(`warning: ${message}\n`));
  }

  /**
   * The key source a new vault gets here: the master key when ASSISTANT_VAULT_MASTER_KEY is set, else the keyring
   * when ASSISTANT_VAULT_KEYRING asks for it (or by default on macOS and Windows), else vault.key.
   */
  get keySource(): KeySourceKind {
    return keySourceKind(this.env);
  }

  /** Secret names, sorted; never values. Needs no key. */
  list(): string[] {
    return [...(readVaultFile(this.file)?.secrets.keys() ?? [])].sort();
  }

  has(name: string): boolean {
    assertValidName(name);
    return readVaultFile(this.file)?.secrets.has(name) ?? false;
  }

  get(name: string): string {
    assertValidName(name);
    const doc = readVaultFile(this.file);
    if (!doc) throw notFound(name);
    const key = this.unlock(doc);
    const entry = doc.secrets.get(name);
    if (!entry) throw notFound(name);
    const value = unseal(key, entry, name);
    if (value === undefined) {
      // The key is right (the check passed), so the entry itself was altered or moved from another name.
      throw new AppError(
        "internal",
        `${this.file}: the entry "${name}" failed authentication (altered, or copied from another entry); set it again`,
      );
    }
    registerSecret(value);
    return value;
  }

  /** Stores a secret; waits (asynchronously) while another process holds the vault's lock. */
  async set(name: string, value: string): Promise<void> {
    assertValidName(name);
    assertValidValue(value);
    registerSecret(value);
    await withFileLock(
      this.lockFile,
      () => {
        const existing = readVaultFile(this.file);
        const { doc, key } = existing ? { doc: existing, key: this.unlock(existing) } : this.create();
        doc.secrets.set(name, { ...seal(key, value, name), updated_at: new Date().toISOString() });
        writeVaultFile(this.file, doc);
        if (!existing && doc.keyring_fallback !== undefined) {
          this.onWarning(
            `${doc.keyring_fallback}; the vault key was stored in ${this.keyFile} instead (${KEYRING_ENV}=0 turns the keyring off, ${MASTER_KEY_ENV} avoids the key file)`,
          );
        }
      },
      this.lockOptions,
    );
  }

  async delete(name: string): Promise<void> {
    assertValidName(name);
    await withFileLock(
      this.lockFile,
      () => {
        const doc = readVaultFile(this.file);
        if (!doc) throw notFound(name);
        this.unlock(doc);
        if (!doc.secrets.delete(name)) throw notFound(name);
        writeVaultFile(this.file, doc);
      },
      this.lockOptions,
    );
  }

  /** For doctor: where the key comes from, whether it opens the file, and whether vault.key is private. */
  status(): VaultStatus {
    const report = describeKeySource(this.env, this.keyFile);
    const doc = readVaultFile(this.file);
    if (!doc) return { ...report, file: this.file, exists: false, count: 0 };
    const base = {
      ...report,
      source: doc.key_source,
      file: this.file,
      exists: true,
      count: doc.secrets.size,
      created_with: doc.key_source,
      ...(doc.keyring_fallback !== undefined ? { keyring_fallback: doc.keyring_fallback } : {}),
    };
    try {
      this.unlock(doc);
      return { ...base, key_ok: true };
    } catch (error) {
      if (error instanceof AppError && error.code === "vault_locked") {
        return { ...base, key_ok: false, key_problem: error.message };
      }
      throw error;
    }
  }

  /** The key that opens `doc`, or a vault_locked error saying why not. Never changes the file. */
  private unlock(doc: VaultDocument): Buffer {
    this.assertSourceUsable(doc.key_source);
    const check = `${doc.key_check.iv}:${doc.key_check.data}`;
    if (doc.key_source === "keyring" && this.keyringKey?.check === check) return this.keyringKey.key;
    const key = this.source(doc.key_source).unlock(doc.kdf);
    if (!keyOpens(key, doc)) {
      const message =
        doc.key_source === "master_key"
          ? `the vault master key does not match the one ${this.file} was created with. Set ${MASTER_KEY_ENV} to the original key; nothing was changed (to start an empty vault, move vault.json away).`
          : doc.key_source === "keyring"
            ? `the key in the OS keyring does not match the one ${this.file} was created with (the entry was replaced). Restore the original entry; nothing was changed.`
            : `the key in ${this.keyFile} does not match the one ${this.file} was created with. Restore the original vault.key; nothing was changed.`;
      throw new AppError("vault_locked", message);
    }
    if (doc.key_source === "keyring") this.keyringKey = { check, key };
    return key;
  }

  /** A master key in the environment must protect the vault: it never silently opens one made without it. */
  private assertSourceUsable(createdWith: KeySourceKind): void {
    const masterKeySet = masterKeyFrom(this.env) !== undefined;
    if (masterKeySet === (createdWith === "master_key")) return;
    const made =
      createdWith === "master_key"
        ? undefined
        : createdWith === "keyring"
          ? "a key in the OS keyring"
          : `the key file ${this.keyFile}`;
    const message = made
      ? `${this.file} was created with ${made}, but ${MASTER_KEY_ENV} is set. Unset it to use this vault, or move the vault to the master key with \`assistant vault rekey --to master-key\`; nothing was changed.`
      : `${this.file} was created with a master key, but ${MASTER_KEY_ENV} is not set. Set it to the same key (the daemon and the CLI both need it); nothing was changed.`;
    throw new AppError("vault_locked", message);
  }

  private source(kind: KeySourceKind): KeySource {
    let source = this.sources.get(kind);
    if (!source) {
      source = keySourceFor(kind, {
        env: this.env,
        keyFile: this.keyFile,
        vaultFile: this.file,
        keyring: this.keyring,
      });
      this.sources.set(kind, source);
    }
    return source;
  }

  /**
   * A new, empty vault document (written by the caller) and its key. The key is settled first: in the keyring
   * when it is wanted and works, else in vault.key, with the keyring's failure recorded in the document.
   */
  private create(): { doc: VaultDocument; key: Buffer } {
    let kind = keySourceKind(this.env);
    let fallback: string | undefined;
    let created: { key: Buffer; kdf?: KdfParams } | undefined;
    if (kind === "keyring") {
      try {
        created = this.source("keyring").create();
      } catch (error) {
        if (!(error instanceof KeyringUnavailable)) throw error;
        kind = "key_file";
        fallback = error.message;
      }
    }
    const { key, kdf } = created ?? this.source(kind).create();
    const doc: VaultDocument = {
      key_source: kind,
      ...(kdf ? { kdf } : {}),
      ...(fallback !== undefined ? { keyring_fallback: fallback } : {}),
      key_check: sealKeyCheck(key),
      secrets: new Map(),
    };
    if (kind === "keyring") this.keyringKey = { check: `${doc.key_check.iv}:${doc.key_check.data}`, key };
    return { doc, key };
  }
}

function notFound(name: string): AppError {
  return new AppError("not_found", `no secret named "${name}" in the vault`, { key: name });
}

/** The vault of a data directory, with the key source taken from `env`. */
export function openVault(
  paths: Pick<DataPaths, "vaultFile" | "vaultKey">,
  env: NodeJS.ProcessEnv = process.env,
): Vault {
  return new Vault({ paths, env });
}
