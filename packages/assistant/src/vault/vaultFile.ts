import { readFileSync } from "node:fs";
import { writeFileAtomic } from "../util/atomicWrite.ts";
import { ConfigError } from "../util/errors.ts";
import { KDF_LIMITS, type KdfParams, type KeySourceKind } from "./keySource.ts";
import { IV_BYTES, type Sealed, TAG_BYTES } from "./seal.ts";
import { isValidName } from "./validate.ts";

// The on-disk shape of vault.json and its strict reader. A file that does not match is a ConfigError naming
// the file: the vault never "repairs" or replaces a file it cannot read, since that would destroy secrets.

export const FORMAT = "assistant-vault";
export const VERSION = 1;

export interface SecretEntry extends Sealed {
  updated_at: string;
}

export interface VaultDocument {
  key_source: KeySourceKind;
  kdf?: KdfParams;
  /** Why a key_file vault is not in the OS keyring although the keyring was wanted when it was created. */
  keyring_fallback?: string;
  /** A known plaintext sealed with the key, so a wrong key is detected before anything is read or written. */
  key_check: Sealed;
  /** A Map, not an object: names such as `__proto__` are valid and must stay plain data. */
  secrets: Map<string, SecretEntry>;
}

/** The parsed vault, or undefined when the file does not exist yet. */
export function readVaultFile(path: string): VaultDocument | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  return parseVault(text, path);
}

export function writeVaultFile(path: string, doc: VaultDocument): void {
  const secrets = [...doc.secrets.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const out = {
    format: FORMAT,
    version: VERSION,
    key_source: doc.key_source,
    ...(doc.kdf ? { kdf: doc.kdf } : {}),
    ...(doc.keyring_fallback !== undefined ? { keyring_fallback: doc.keyring_fallback } : {}),
    key_check: doc.key_check,
    secrets: Object.fromEntries(secrets), // defines own properties, so `__proto__` survives as a key
  };
  writeFileAtomic(path, `${JSON.stringify(out, null, 2)}\n`, 0o600);
}

export function parseVault(text: string, file: string): VaultDocument {
  const fail = (key: string, reason: string): never => {
    throw new ConfigError(file, key, `${reason}. The vault does not replace a damaged file: restore it from a backup.`);
  };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    return fail("", `not valid JSON (${(error as Error).message})`);
  }
  if (!isObject(raw)) return fail("", "expected a JSON object");
  if (raw.format !== FORMAT) return fail("format", `expected "${FORMAT}"`);
  if (raw.version !== VERSION) return fail("version", `unsupported version (this assistant reads version ${VERSION})`);
  const keySource = raw.key_source;
  if (keySource !== "master_key" && keySource !== "key_file" && keySource !== "keyring")
    return fail("key_source", 'expected "master_key", "key_file" or "keyring"');
  let kdf: KdfParams | undefined;
  if (keySource === "master_key") {
    const reason = kdfProblem(raw.kdf);
    if (reason) return fail("kdf", reason);
    const { salt, N, r, p } = raw.kdf as KdfParams;
    kdf = { name: "scrypt", salt, N, r, p };
  }
  const fallback = raw.keyring_fallback;
  if (fallback !== undefined && (typeof fallback !== "string" || keySource !== "key_file"))
    return fail("keyring_fallback", "expected a string, and only with key_source key_file");
  if (!isSealed(raw.key_check)) return fail("key_check", "expected {iv, tag, data} in base64");
  if (!isObject(raw.secrets)) return fail("secrets", "expected an object");
  const secrets = new Map<string, SecretEntry>();
  for (const [name, entry] of Object.entries(raw.secrets)) {
    if (!isValidName(name)) return fail(`secrets.${name.slice(0, 40)}`, "invalid key name");
    if (!isSealed(entry) || typeof (entry as { updated_at?: unknown }).updated_at !== "string") {
      return fail(`secrets.${name}`, "expected {iv, tag, data, updated_at}");
    }
    const { iv, tag, data, updated_at } = entry as SecretEntry;
    secrets.set(name, { iv, tag, data, updated_at });
  }
  const { iv, tag, data } = raw.key_check as Sealed;
  return {
    key_source: keySource,
    ...(kdf ? { kdf } : {}),
    ...(fallback !== undefined ? { keyring_fallback: fallback } : {}),
    key_check: { iv, tag, data },
    secrets,
  };
}

function kdfProblem(value: unknown): string | undefined {
  if (!isObject(value) || value.name !== "scrypt") return 'expected {name: "scrypt", salt, N, r, p}';
  const { salt, N, r, p } = value;
  if (!isBase64(salt) || Buffer.from(salt, "base64").length < 16) return "salt must be at least 16 bytes of base64";
  const isInt = (n: unknown, max: number): n is number =>
    Number.isInteger(n) && (n as number) >= 1 && (n as number) <= max;
  if (!isInt(N, KDF_LIMITS.maxN) || N < 2 || (N & (N - 1)) !== 0)
    return `N must be a power of two up to ${KDF_LIMITS.maxN}`;
  if (!isInt(r, KDF_LIMITS.maxR)) return `r must be 1 to ${KDF_LIMITS.maxR}`;
  if (!isInt(p, KDF_LIMITS.maxP)) return `p must be 1 to ${KDF_LIMITS.maxP}`;
  return undefined;
}

function isSealed(value: unknown): value is Sealed {
  if (!isObject(value)) return false;
  const { iv, tag, data } = value;
  return (
    isBase64(iv) &&
    Buffer.from(iv, "base64").length === IV_BYTES &&
    isBase64(tag) &&
    Buffer.from(tag, "base64").length === TAG_BYTES &&
    isBase64(data)
  );
}

function isBase64(value: unknown): value is string {
  return typeof value === "string" && value.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(value);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
