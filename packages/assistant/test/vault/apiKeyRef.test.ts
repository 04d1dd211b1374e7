import { afterEach, describe, expect, it } from "vitest";
import { redact } from "../../src/util/redact.ts";
import { resolveApiKeyRef } from "../../src/vault/apiKeyRef.ts";
import { MASTER_KEY_ENV } from "../../src/vault/keySource.ts";
import { errorOf, removeTempDirs, tempPaths, vaultAt } from "./helpers.ts";

afterEach(removeTempDirs);

describe("resolveApiKeyRef", () => {
  it("reads vault://<name> from the vault", async () => {
    const vault = vaultAt(tempPaths());
    await vault.set("cloud_a_api_key", "sk-from-vault");
    expect(resolveApiKeyRef("vault://cloud_a_api_key", { vault, env: {} })).toBe("sk-from-vault");
  });

  it("reads an environment variable name from env and registers the value for redaction", () => {
    const vault = vaultAt(tempPaths());
    expect(resolveApiKeyRef("CLOUD_A_API_KEY", { vault, env: { CLOUD_A_API_KEY: "sk-from-env-123" } })).toBe(
      "sk-from-env-123",
    );
    expect(redact("key sk-from-env-123")).toBe("key [REDACTED]");
  });

  it("throws not_found naming the ref, never a value, when the entry or variable is missing", async () => {
    const vault = vaultAt(tempPaths());
    await vault.set("other", "sk-other-value");
    const missing = errorOf(() => resolveApiKeyRef("vault://cloud_b_api_key", { vault, env: {} }));
    expect(missing.code).toBe("not_found");
    expect(missing.message).toContain("vault://cloud_b_api_key");
    expect(missing.message).toContain("assistant vault set cloud_b_api_key");
    expect(missing.message).not.toContain("sk-other-value");

    for (const env of [{}, { CLOUD_B_API_KEY: "" }]) {
      const unset = errorOf(() => resolveApiKeyRef("CLOUD_B_API_KEY", { vault, env }));
      expect(unset.code).toBe("not_found");
      expect(unset.message).toContain("CLOUD_B_API_KEY");
    }
  });

  it("rejects a ref that is neither form without echoing it (it may be a pasted key)", () => {
    const vault = vaultAt(tempPaths());
    for (const ref of ["sk-live-abc/def", "", "vault://bad name"]) {
      const error = errorOf(() => resolveApiKeyRef(ref, { vault, env: {} }));
      expect(error.code).toBe("invalid_request");
      if (ref) expect(error.message).not.toContain(ref);
    }
  });

  it("passes vault_locked through", async () => {
    const paths = tempPaths();
    await vaultAt(paths, { [MASTER_KEY_ENV]: "right" }).set("k", "value");
    const vault = vaultAt(paths, { [MASTER_KEY_ENV]: "wrong" });
    expect(errorOf(() => resolveApiKeyRef("vault://k", { vault, env: {} })).code).toBe("vault_locked");
  });
});
