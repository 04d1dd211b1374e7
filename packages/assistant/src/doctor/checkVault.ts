import { existsSync, readdirSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { describeKeySource, MASTER_KEY_ENV } from "../vault/keySource.ts";
import { type CheckContext, type CheckResult, FIX_COMMAND, result } from "./types.ts";

// Secrets at rest: which key protects the vault, and whether the files holding secrets are private to this user.

export function checkVaultKey(ctx: CheckContext): CheckResult {
  const { vaultFile, vaultKey } = ctx.paths;
  const report = describeKeySource(ctx.env, vaultKey);
  const title = "vault key";
  if (report.source === "master_key") return result("vault.key_source", title, "ok", `protected by ${MASTER_KEY_ENV}`);
  if (!existsSync(vaultFile) && !report.key_file_exists) {
    return result("vault.key_source", title, "ok", "no secrets stored yet");
  }
  return result(
    "vault.key_source",
    title,
    "warn",
    `the vault is unlocked by ${basename(vaultKey)}, stored next to it: anyone who copies the data directory can read your secrets`,
    { fix: `set ${MASTER_KEY_ENV} to a passphrase in the daemon's environment (not in assistant.env)`, fixable: false },
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
