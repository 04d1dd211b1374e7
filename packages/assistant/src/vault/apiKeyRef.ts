import { AppError } from "../util/errors.ts";
import { registerSecret } from "../util/redact.ts";
import type { Vault } from "./vault.ts";

// Resolves a route's `api_key_ref` (docs/security.md#secrets-the-vault): `vault://<name>` reads the vault, anything
// else names an environment variable. Contract: it returns the secret or throws an AppError, never returns undefined; a
// route without a key simply has no api_key_ref, so "no key" is the caller's case, not this function's. Error messages
// name the ref but never contain a value.

const VAULT_PREFIX = "vault://";
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface ApiKeyRefSources {
  vault: Pick<Vault, "get">;
  env: NodeJS.ProcessEnv;
}

/**
 * The secret `ref` points at.
 * Throws `not_found` when the vault entry is missing or the variable is unset or empty, `invalid_request` when
 * `ref` is neither form, and passes on vault errors such as `vault_locked`.
 */
export function resolveApiKeyRef(ref: string, sources: ApiKeyRefSources): string {
  if (ref.startsWith(VAULT_PREFIX)) return fromVault(ref, ref.slice(VAULT_PREFIX.length), sources.vault);
  if (!ENV_NAME.test(ref)) {
    // Not echoed: a value that is neither form is often the API key itself pasted in the wrong place.
    throw new AppError(
      "invalid_request",
      "api_key_ref must be vault://<name> or the name of an environment variable; store the key with `assistant vault set <name>` and refer to it as vault://<name>",
      { field: "api_key_ref" },
    );
  }
  const value = sources.env[ref];
  if (!value) {
    throw new AppError("not_found", `api_key_ref ${ref}: the environment variable ${ref} is not set`, {
      api_key_ref: ref,
    });
  }
  registerSecret(value);
  return value;
}

function fromVault(ref: string, name: string, vault: Pick<Vault, "get">): string {
  try {
    return vault.get(name);
  } catch (error) {
    if (error instanceof AppError && error.code === "not_found") {
      throw new AppError(
        "not_found",
        `api_key_ref ${ref}: no secret named "${name}" in the vault; store it with \`assistant vault set ${name}\``,
        { api_key_ref: ref },
      );
    }
    if (error instanceof AppError && error.code === "invalid_request") {
      throw new AppError("invalid_request", `api_key_ref: ${error.message}`, { field: "api_key_ref" });
    }
    throw error;
  }
}
