import type { DataPaths } from "../config/paths.ts";
import { AppError } from "../util/errors.ts";
import { registerSecret } from "../util/redact.ts";
import { type LockOptions, withFileLock } from "./fileLock.ts";
import {
  describeKeySource,
  type KeySource,
  type KeySourceKind,
  type KeySourceReport,
  keySourceFor,
  MASTER_KEY_ENV,
} from "./keySource.ts";
import { seal, unseal } from "./seal.ts";
import { assertValidName, assertValidValue } from "./validate.ts";
import { readVaultFile, type VaultDocument, writeVaultFile } from "./vaultFile.ts";

// The vault service: named secrets in vault.json, each sealed with AES-256-GCM under the vault key, the name
// as additional authenticated data. The file is re-read on every call because the CLI and the daemon share
// it; writers serialise on a lock file. Listing needs no key (names are not secret); reading and writing do,
// and a key that does not match the file stops the call before anything is read or changed.

const KEY_CHECK_AAD = "vault key check"; // has a space, so it can never be a secret's name
const KEY_CHECK_PLAINTEXT = "assistant-vault-key-check-v1";

export interface VaultOptions {
  paths: Pick<DataPaths, "vaultFile" | "vaultKey">;
  /** Where ASSISTANT_VAULT_MASTER_KEY is read from (default process.env). */
  env?: NodeJS.ProcessEnv;
  lock?: LockOptions;
}

export interface VaultStatus extends KeySourceReport {
  file: string;
  exists: boolean;
  count: number;
  /** The key source vault.json was created with (absent while the vault does not exist). */
  created_with?: KeySourceKind;
  /** Whether the current key opens vault.json (absent while the vault does not exist). */
  key_ok?: boolean;
  /** Why the key does not open it, when key_ok is false. */
  key_problem?: string;
}

export class Vault {
  readonly file: string;
  private readonly keyFile: string;
  private readonly lockFile: string;
  private readonly env: NodeJS.ProcessEnv;
  private readonly keys: KeySource;
  private readonly lockOptions: LockOptions;

  constructor(options: VaultOptions) {
    this.file = options.paths.vaultFile;
    this.keyFile = options.paths.vaultKey;
    this.lockFile = `${this.file}.lock`;
    this.env = options.env ?? process.env;
    this.keys = keySourceFor(this.env, this.keyFile);
    this.lockOptions = options.lock ?? {};
  }

  /** The key source this process uses: the master key when ASSISTANT_VAULT_MASTER_KEY is set, else vault.key. */
  get keySource(): KeySourceKind {
    return this.keys.kind;
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

  set(name: string, value: string): void {
    assertValidName(name);
    assertValidValue(value);
    registerSecret(value);
    withFileLock(
      this.lockFile,
      () => {
        const existing = readVaultFile(this.file);
        const { doc, key } = existing ? { doc: existing, key: this.unlock(existing) } : this.create();
        doc.secrets.set(name, { ...seal(key, value, name), updated_at: new Date().toISOString() });
        writeVaultFile(this.file, doc);
      },
      this.lockOptions,
    );
  }

  delete(name: string): void {
    assertValidName(name);
    withFileLock(
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
    const base = { ...report, file: this.file, exists: true, count: doc.secrets.size, created_with: doc.key_source };
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
    if (doc.key_source !== this.keys.kind) throw this.sourceMismatch(doc.key_source);
    const key = this.keys.unlock(doc.kdf);
    if (unseal(key, doc.key_check, KEY_CHECK_AAD) !== KEY_CHECK_PLAINTEXT) {
      const message =
        doc.key_source === "master_key"
          ? `the vault master key does not match the one ${this.file} was created with. Set ${MASTER_KEY_ENV} to the original key; nothing was changed (to start an empty vault, move vault.json away).`
          : `the key in ${this.keyFile} does not match the one ${this.file} was created with. Restore the original vault.key; nothing was changed.`;
      throw new AppError("vault_locked", message);
    }
    return key;
  }

  private sourceMismatch(createdWith: KeySourceKind): AppError {
    const message =
      createdWith === "master_key"
        ? `${this.file} was created with a master key, but ${MASTER_KEY_ENV} is not set. Set it to the same key (the daemon and the CLI both need it); nothing was changed.`
        : `${this.file} was created with the key file ${this.keyFile}, but ${MASTER_KEY_ENV} is set. Unset it to use this vault (moving a vault to a master key is not supported yet); nothing was changed.`;
    return new AppError("vault_locked", message);
  }

  /** A new, empty vault document under the current key source (written by the caller). */
  private create(): { doc: VaultDocument; key: Buffer } {
    const { key, kdf } = this.keys.create();
    const doc: VaultDocument = {
      key_source: this.keys.kind,
      ...(kdf ? { kdf } : {}),
      key_check: seal(key, KEY_CHECK_PLAINTEXT, KEY_CHECK_AAD),
      secrets: new Map(),
    };
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
