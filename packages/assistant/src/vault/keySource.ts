import { randomBytes, scryptSync } from "node:crypto";
import {
  closeSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join, resolve } from "node:path";
import type { Entry as KeyringEntry } from "@napi-rs/keyring";
import { readSettingsOf } from "../config/settings.ts";
import { AppError } from "../util/errors.ts";
import { registerSecret } from "../util/redact.ts";

// Where the vault's 256-bit key comes from: ASSISTANT_VAULT_MASTER_KEY through scrypt when it is set; else, for
// a new vault, 32 random bytes in the OS keyring when it is wanted and works (ASSISTANT_VAULT_KEYRING); else
// the random `vault.key` file in the data directory. An existing vault keeps the source vault.json records.

export type KeySourceKind = "master_key" | "key_file" | "keyring";

export const MASTER_KEY_ENV = "ASSISTANT_VAULT_MASTER_KEY";
export const KEYRING_ENV = "ASSISTANT_VAULT_KEYRING";
/** The keyring entry of a vault: this service, and the absolute path of its vault.json as the account. */
export const KEYRING_SERVICE = "assistant-vault";
export const KEY_BYTES = 32;

/** scrypt parameters, stored in vault.json next to the salt so they can be raised later without breaking old files. */
export interface KdfParams {
  name: "scrypt";
  salt: string; // base64, 16 random bytes
  N: number;
  r: number;
  p: number;
}

// N=2^16, r=8: 64 MiB and about 130 ms on a small machine, paid once per process (the key is cached).
const DEFAULT_COST = { N: 2 ** 16, r: 8, p: 1 };
// Upper bounds for parameters read from the file, so an edited vault.json cannot make us allocate gigabytes.
export const KDF_LIMITS = { maxN: 2 ** 20, maxR: 32, maxP: 16 };

export interface KeySource {
  readonly kind: KeySourceKind;
  /** The key of an existing vault (its stored KDF parameters for master_key, none for key_file). */
  unlock(kdf: KdfParams | undefined): Buffer;
  /** The key for a new vault and the KDF parameters to store with it; creates vault.key when needed. */
  create(): { key: Buffer; kdf?: KdfParams };
}

/** The master key when set; an empty value counts as unset. */
export function masterKeyFrom(env: NodeJS.ProcessEnv): string | undefined {
  const value = env[MASTER_KEY_ENV];
  return value ? value : undefined;
}

/**
 * Whether a new vault tries the OS keyring: ASSISTANT_VAULT_KEYRING=1 yes, 0 no; unset (or empty) yes on macOS and
 * Windows, where a keyring always exists, and no elsewhere (a Linux server often has no Secret Service).
 */
export function keyringWanted(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): boolean {
  return readSettingsOf(env, ["vaultKeyring"]).vaultKeyring ?? (platform === "darwin" || platform === "win32");
}

/** The source a new vault gets in this environment (the keyring may still fall back to key_file when it fails). */
export function keySourceKind(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): KeySourceKind {
  if (masterKeyFrom(env) !== undefined) return "master_key";
  return keyringWanted(env, platform) ? "keyring" : "key_file";
}

export interface KeySourceOptions {
  env: NodeJS.ProcessEnv;
  keyFile: string;
  vaultFile: string;
  keyring: Keyring;
}

/** The source of `kind`; master_key needs ASSISTANT_VAULT_MASTER_KEY set (the caller checks). */
export function keySourceFor(kind: KeySourceKind, options: KeySourceOptions): KeySource {
  if (kind === "keyring") return keyringSource(options.keyring, options.vaultFile);
  if (kind === "key_file") return keyFileSource(options.keyFile);
  const masterKey = masterKeyFrom(options.env);
  if (masterKey === undefined) throw new AppError("vault_locked", `${MASTER_KEY_ENV} is not set`);
  return masterKeySource(masterKey);
}

function masterKeySource(masterKey: string): KeySource {
  registerSecret(masterKey);
  // One derivation per process and salt: the daemon re-reads vault.json on every call but derives once.
  let cached: { id: string; key: Buffer } | undefined;
  const derive = (kdf: KdfParams): Buffer => {
    const id = `${kdf.salt}:${kdf.N}:${kdf.r}:${kdf.p}`;
    if (cached?.id !== id) cached = { id, key: deriveKey(masterKey, kdf) };
    return cached.key;
  };
  return {
    kind: "master_key",
    unlock: (kdf) => {
      if (!kdf) throw new AppError("vault_locked", "vault.json has no key derivation parameters for the master key");
      return derive(kdf);
    },
    create: () => {
      const kdf: KdfParams = { name: "scrypt", salt: randomBytes(16).toString("base64"), ...DEFAULT_COST };
      return { key: derive(kdf), kdf };
    },
  };
}

export function deriveKey(masterKey: string, kdf: KdfParams): Buffer {
  const { N, r, p } = kdf;
  // NFC: the same passphrase typed on different systems may arrive in different Unicode normal forms.
  return scryptSync(masterKey.normalize("NFC"), Buffer.from(kdf.salt, "base64"), KEY_BYTES, {
    N,
    r,
    p,
    maxmem: 256 * N * r + 16 * 1024 * 1024, // scrypt needs ~128*N*r bytes; Node's 32 MiB default is too small
  });
}

function keyFileSource(path: string): KeySource {
  return {
    kind: "key_file",
    unlock: () => {
      const key = readKeyFile(path);
      if (!key) {
        throw new AppError(
          "vault_locked",
          `vault.json was created with the key file ${path}, which is missing. Restore it from a backup (or set ${MASTER_KEY_ENV} if the vault was made with one); nothing was changed.`,
        );
      }
      return key;
    },
    create: () => ({ key: readKeyFile(path) ?? createKeyFile(path) }),
  };
}

/**
 * The OS keyring as the vault uses it: one password per account under KEYRING_SERVICE. Both calls throw when the
 * keyring cannot be reached. Synchronous, like the rest of the vault (a local IPC call, once per process).
 */
export interface Keyring {
  /** The stored password, or null when there is no entry. */
  read(account: string): string | null;
  write(account: string, password: string): void;
  /** Removes the entry (after a rekey moved the vault away from it); false when there was none. */
  delete(account: string): boolean;
}

/**
 * The platform keyring (macOS Keychain, Windows Credential Manager, the Secret Service on Linux) through the
 * native @napi-rs/keyring module, loaded on first use only, so commands that need no key never load it.
 */
export function osKeyring(): Keyring {
  let Entry: typeof KeyringEntry | undefined;
  const entry = (account: string): KeyringEntry => {
    // A synchronous require, not import(): the vault API is synchronous, and this runs only when a keyring is used.
    Entry ??= (createRequire(import.meta.url)("@napi-rs/keyring") as { Entry: typeof KeyringEntry }).Entry;
    // Linux: the Secret Service only. The library would otherwise fall back to the kernel keyring, which is
    // emptied at logout or reboot, and the vault would be lost with it.
    return new Entry(KEYRING_SERVICE, account, { linux: { store: "secret-service" } });
  };
  return {
    read: (account) => entry(account).getPassword(),
    write: (account, password) => entry(account).setPassword(password),
    delete: (account) => entry(account).deletePassword(),
  };
}

/** The keyring could not hold a new vault's key; the vault falls back to vault.key and reports `message`. */
export class KeyringUnavailable extends Error {
  override name = "KeyringUnavailable";
}

/** The account a vault's key is stored under: the absolute path of its vault.json. */
export function keyringAccount(vaultFile: string): string {
  return resolve(vaultFile);
}

function keyringSource(keyring: Keyring, vaultFile: string): KeySource {
  const account = keyringAccount(vaultFile);
  const where = `the OS keyring (service "${KEYRING_SERVICE}", account "${account}")`;
  const locked = (problem: string) =>
    new AppError(
      "vault_locked",
      `${vaultFile} was created with its key in ${where}, but ${problem}; nothing was changed.`,
    );
  return {
    kind: "keyring",
    unlock: () => {
      let stored: string | null;
      try {
        stored = keyring.read(account);
      } catch (error) {
        throw locked(
          `the keyring cannot be reached (${reasonOf(error)}). Run the assistant in the login session whose keyring holds the key (on Linux: an unlocked Secret Service such as GNOME Keyring, with DBUS_SESSION_BUS_ADDRESS set)`,
        );
      }
      if (stored === null) {
        throw locked(
          "the keyring has no such entry: it was deleted, or this is another user's or session's keyring (the entry is tied to the path of vault.json, so a moved data directory does not find it either)",
        );
      }
      const key = decodeKey(stored);
      if (!key) throw locked(`the entry there is not a ${KEY_BYTES}-byte vault key`);
      return key;
    },
    create: () => {
      const fail = (what: string, error?: unknown): never => {
        throw new KeyringUnavailable(`${what}${error === undefined ? "" : ` (${reasonOf(error)})`}`);
      };
      let existing: string | null = null;
      try {
        existing = keyring.read(account);
      } catch (error) {
        fail("the OS keyring cannot be reached", error);
      }
      if (existing !== null) {
        // Left by an earlier vault at this path (one moved aside, say): reuse it, never overwrite it, as with vault.key.
        const key = decodeKey(existing);
        return key ? { key } : fail(`${where} already holds an entry that is not a vault key; it was left alone`);
      }
      const key = randomBytes(KEY_BYTES);
      const encoded = key.toString("base64");
      registerSecret(encoded);
      try {
        keyring.write(account, encoded);
      } catch (error) {
        fail("storing the key in the OS keyring failed", error);
      }
      let back: string | null = null;
      try {
        back = keyring.read(account);
      } catch (error) {
        fail("reading the key back from the OS keyring failed", error);
      }
      return back === encoded ? { key } : fail("the OS keyring did not return the key it was given");
    },
  };
}

/** The 32-byte key in a keyring password (base64), or undefined when it is anything else. */
function decodeKey(stored: string): Buffer | undefined {
  const key = Buffer.from(stored, "base64");
  if (key.length !== KEY_BYTES || key.toString("base64") !== stored) return undefined;
  registerSecret(stored);
  return key;
}

/** One line of a keyring library error, for a message (never holds a key: the library does not echo passwords). */
function reasonOf(error: unknown): string {
  const text = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, " ").trim();
  return text.length > 300 ? `${text.slice(0, 300)}...` : text || "unknown error";
}

/** The 32-byte key in `path`, or undefined when the file does not exist. */
export function readKeyFile(path: string): Buffer | undefined {
  let key: Buffer;
  try {
    key = readFileSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  if (key.length !== KEY_BYTES) {
    throw new AppError("vault_locked", `${path} must hold exactly ${KEY_BYTES} bytes but holds ${key.length}`);
  }
  return key;
}

/**
 * Creates `path` with 32 random bytes, mode 0600. Written to a temp file and hard-linked into place, so a
 * concurrent creator either wins or reads the complete key of the winner, never a half-written file.
 */
export function createKeyFile(path: string): Buffer {
  const tmp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`);
  const key = randomBytes(KEY_BYTES);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const fd = openSync(tmp, "wx", 0o600);
  try {
    writeSync(fd, key);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(tmp, path);
    return key;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    return readKeyFile(path)!;
  } finally {
    rmSync(tmp, { force: true });
  }
}

/**
 * For doctor: false when vault.key is readable by group or others (POSIX), undefined when it does not exist.
 * Windows has no mode bits (its ACLs are out of scope), so it always passes there.
 */
export function keyFileModeOk(path: string): boolean | undefined {
  let mode: number;
  try {
    mode = statSync(path).mode;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  return process.platform === "win32" || (mode & 0o077) === 0;
}

export interface KeySourceReport {
  /** The source a new vault gets in this environment (Vault.status() reports the existing vault's instead). */
  source: KeySourceKind;
  key_file: string;
  key_file_exists: boolean;
  key_file_mode_ok: boolean | undefined;
}

/** Which key source this environment selects, for doctor (it warns when the vault relies on key_file). */
export function describeKeySource(env: NodeJS.ProcessEnv, keyFile: string): KeySourceReport {
  const modeOk = keyFileModeOk(keyFile);
  return {
    source: keySourceKind(env),
    key_file: keyFile,
    key_file_exists: modeOk !== undefined,
    key_file_mode_ok: modeOk,
  };
}
