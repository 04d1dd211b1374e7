import type { DataPaths } from "../../src/config/paths.ts";
import { Vault } from "../../src/vault/vault.ts";

/** A real vault in `paths` (file-based key) holding `secrets`: tests resolve api_key_ref through it like the daemon. */
export function vaultWithSecrets(paths: DataPaths, secrets: Record<string, string> = {}): Vault {
  const vault = new Vault({ paths, env: { ASSISTANT_VAULT_MASTER_KEY: "test-master-key-for-provider-tests" } });
  for (const [name, value] of Object.entries(secrets)) vault.set(name, value);
  return vault;
}
