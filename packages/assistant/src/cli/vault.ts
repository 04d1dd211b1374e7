import type { Command } from "commander";
import { type CliContext, output, readStdin } from "./context.ts";

// `assistant vault list|set|get|delete`: works on the data directory directly (no daemon needed) through the
// same Vault service the daemon uses. The service is imported inside each action to keep CLI start-up light.

async function openVault(ctx: CliContext) {
  const [{ Vault }, { effectiveEnv }] = await Promise.all([
    import("../vault/vault.ts"),
    import("../config/envFile.ts"),
  ]);
  // Same key-source settings as the daemon (ASSISTANT_VAULT_KEYRING may be set in assistant.env).
  return new Vault({ paths: ctx.paths, env: effectiveEnv(ctx.paths, ctx.env) });
}

export function registerVaultCommands(program: Command, ctx: CliContext): void {
  const vault = program.command("vault").description("encrypted secrets (names are listed, values never)");

  vault
    .command("list")
    .description("list the names of the stored secrets")
    .option("--json", "machine-readable output")
    .action(async (opts: { json?: boolean }) => {
      const names = (await openVault(ctx)).list();
      output(ctx, opts.json, { names }, () => (names.length ? names.join("\n") : "(the vault is empty)"));
    });

  vault
    .command("set <KEY> [value]")
    .description("store a secret; without a value it is read from standard input (multi-line is fine)")
    .action(async (key: string, value: string | undefined) => {
      const { assertValidName } = await import("../vault/validate.ts");
      assertValidName(key); // before asking for the value, not after it was typed
      if (value !== undefined) {
        ctx.stderr.write(
          `warning: a value given on the command line may be kept in your shell history; prefer \`assistant vault set ${key}\` and type or pipe the value\n`,
        );
      } else if (ctx.stdin.isTTY) {
        ctx.stderr.write(`Enter the value for ${key}, then press Ctrl-D on an empty line:\n`);
      }
      const secret = value ?? (await readStdin(ctx));
      await (await openVault(ctx)).set(key, secret);
      ctx.stdout.write(`stored ${key}\n`);
    });

  vault
    .command("get <KEY>")
    .description("print the value of a secret")
    .action(async (key: string) => {
      ctx.stdout.write(`${(await openVault(ctx)).get(key)}\n`);
    });

  vault
    .command("delete <KEY>")
    .description("remove a secret")
    .action(async (key: string) => {
      await (await openVault(ctx)).delete(key);
      ctx.stdout.write(`deleted ${key}\n`);
    });
}
