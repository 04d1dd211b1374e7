import type { DataPaths } from "../../src/config/paths.ts";
import { Vault } from "../../src/vault/vault.ts";

/** A real vault in `paths` (file-based key) holding `secrets`: tests resolve api_key_ref through it like the daemon. */
export function vaultWithSecrets(paths: DataPaths, secrets: Record<string, string> = {}): Vault {
  const vault = new Vault({ paths, env: { ASSISTANT_VAULT_MASTER_KEY: "test-master-key-for-provider-tests" } });
  for (const [name, value] of Object.entries(secrets)) {
    // set() only waits when another process holds the vault's lock; nothing else knows this fresh vault, so its
    // first, synchronous attempt writes at once (withFileLock) and the check below holds without awaiting.
    vault.set(name, value).catch(() => {});
    if (!vault.has(name)) throw new Error(`could not store the test secret ${name}`);
  }
  return vault;
}
