import { readdirSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { describeKeySource, KEYRING_SERVICE, MASTER_KEY_ENV, masterKeyFrom } from "../vault/keySource.ts";
import { openVault } from "../vault/vault.ts";
import { readVaultFile, type VaultDocument } from "../vault/vaultFile.ts";
import { type CheckContext, type CheckResult, FIX_COMMAND, result } from "./types.ts";

// Secrets at rest: which key protects the vault, and whether the files holding secrets are private to this user.

export function checkVaultKey(ctx: CheckContext): CheckResult {
  const { vaultFile, vaultKey } = ctx.paths;
  const id = "vault.key_source";
  const title = "vault key";
  let report: ReturnType<typeof describeKeySource>;
  let doc: VaultDocument | undefined;
  try {
    report = describeKeySource(ctx.env, vaultKey);
    doc = readVaultFile(vaultFile);
  } catch (error) {
    // An unreadable or damaged vault.json, or an invalid ASSISTANT_VAULT_KEYRING.
    return result(id, title, "fail", error instanceof Error ? error.message : String(error));
  }
  const masterKeySet = masterKeyFrom(ctx.env) !== undefined;
  if (doc && masterKeySet !== (doc.key_source === "master_key")) {
    // The recorded source and the environment disagree: every vault command refuses until one of them changes.
    const recorded = doc.key_source === "keyring" ? "the OS keyring" : `the key file ${basename(vaultKey)}`;
    return doc.key_source === "master_key"
      ? result(id, title, "fail", `the vault was created with ${MASTER_KEY_ENV}, which is not set here`, {
          fix: `set ${MASTER_KEY_ENV} to the same passphrase in the daemon's environment (or, with it set, \`assistant vault rekey --to key-file\`)`,
          fixable: false,
        })
      : result(
          id,
          title,
          "fail",
          `${MASTER_KEY_ENV} is set, but the vault was created with ${recorded}: vault commands refuse to open it`,
          {
            fix: `\`assistant vault rekey --to master-key\` (with ${MASTER_KEY_ENV} set) moves the vault to the master key; or unset ${MASTER_KEY_ENV}`,
            fixable: false,
          },
        );
  }
  if (doc?.key_source === "keyring") {
    // The one source doctor opens: whether the entry is there and reachable is exactly what can go wrong.
    const status = openVault(ctx.paths, ctx.env).status();
    if (status.key_ok) return result(id, title, "ok", `protected by the OS keyring (service "${KEYRING_SERVICE}")`);
    return result(id, title, "fail", status.key_problem ?? "the OS keyring does not open the vault", {
      fix: "run the assistant in the login session whose keyring holds the vault key",
      fixable: false,
    });
  }
  if (report.source === "master_key") return result(id, title, "ok", `protected by ${MASTER_KEY_ENV}`);
  if (!doc && !report.key_file_exists) {
    const next = report.source === "keyring" ? "; a new vault's key goes into the OS keyring" : "";
    return result(id, title, "ok", `no secrets stored yet${next}`);
  }
  const why = doc?.keyring_fallback
    ? ` (the OS keyring was wanted but not used when the vault was created: ${doc.keyring_fallback})`
    : "";
  return result(
    id,
    title,
    "warn",
    `the vault is unlocked by ${basename(vaultKey)}, stored next to it: anyone who copies the data directory can read your secrets${why}`,
    {
      // Setting the master key alone would lock the vault: the move re-encrypts it first.
      fix: doc
        ? `set ${MASTER_KEY_ENV} to a passphrase (in the daemon's environment, not in assistant.env) and run \`assistant vault rekey --to master-key\``
        : `set ${MASTER_KEY_ENV} to a passphrase in the daemon's environment (not in assistant.env) before storing secrets`,
      fixable: false,
    },
  );
}

/** Files that hold secrets; readable by anyone but this user is a failure. */
export function secretFiles(ctx: CheckContext): string[] {
  return [ctx.paths.vaultFile, ctx.paths.vaultKey, ctx.paths.authToken];
}

export function checkFileModes(ctx: CheckContext): CheckResult {
  const title = "file permissions";
  if (process.platform === "win32") return result("file_modes", title, "ok", "not checked on Windows (no POSIX modes)");
  const dir = ctx.paths.dataDir;
  const exposed = secretFiles(ctx).filter((file) => (modeOf(file) ?? 0) & 0o077);
  if (exposed.length > 0) {
    const list = exposed.map((file) => `${basename(file)} (${octal(modeOf(file)!)})`).join(", ");
    return result("file_modes", title, "fail", `readable by other users: ${list}; they must be 0600`, {
      fix: FIX_COMMAND,
      fixable: true,
    });
  }
  const dirMode = modeOf(dir);
  if (dirMode !== undefined && dirMode & 0o077) {
    return result(
      "file_modes",
      title,
      "warn",
      `${dir} is ${octal(dirMode)}: other users can look inside; it should be 0700`,
      {
        fix: FIX_COMMAND,
        fixable: true,
      },
    );
  }
  return result("file_modes", title, "ok", "the data directory and its secret files are private to this user");
}

/** The regular files directly in the data directory (what `doctor --fix` makes 0600). */
export function dataFiles(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => join(dir, entry.name));
  } catch {
    return [];
  }
}

export function modeOf(path: string): number | undefined {
  try {
    return statSync(path).mode & 0o777;
  } catch {
    return undefined;
  }
}

const octal = (mode: number) => `0${mode.toString(8).padStart(3, "0")}`;
