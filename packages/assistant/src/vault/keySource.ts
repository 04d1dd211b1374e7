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
import { basename, dirname, join } from "node:path";
import { AppError } from "../util/errors.ts";
import { registerSecret } from "../util/redact.ts";

// Where the vault's 256-bit key comes from: ASSISTANT_VAULT_MASTER_KEY through scrypt when it is set, else the
// random `vault.key` file in the data directory. (An OS keyring would be a third source; not implemented.)

export type KeySourceKind = "master_key" | "key_file";

export const MASTER_KEY_ENV = "ASSISTANT_VAULT_MASTER_KEY";
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

export function keySourceKind(env: NodeJS.ProcessEnv): KeySourceKind {
  return masterKeyFrom(env) === undefined ? "key_file" : "master_key";
}

export function keySourceFor(env: NodeJS.ProcessEnv, keyFile: string): KeySource {
  const masterKey = masterKeyFrom(env);
  return masterKey === undefined ? keyFileSource(keyFile) : masterKeySource(masterKey);
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
  source: KeySourceKind;
  key_file: string;
  key_file_exists: boolean;
  key_file_mode_ok: boolean | undefined;
}

/** Which key source is in use, for doctor (it warns when the vault relies on key_file). */
export function describeKeySource(env: NodeJS.ProcessEnv, keyFile: string): KeySourceReport {
  const modeOk = keyFileModeOk(keyFile);
  return {
    source: keySourceKind(env),
    key_file: keyFile,
    key_file_exists: modeOk !== undefined,
    key_file_mode_ok: modeOk,
  };
}
