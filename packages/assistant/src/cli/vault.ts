import { type Command, InvalidArgumentError } from "commander";
import { type CliContext, output, readStdin } from "./context.ts";

// `assistant vault list|set|get|delete|rekey`: works on the data directory directly (no daemon needed) through the
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

  vault
    .command("rekey")
    .description("move the vault to another key source, re-encrypting every secret (atomic: safe to interrupt)")
    .requiredOption("--to <source>", `the new key source: ${Object.keys(REKEY_TARGETS).join(", ")}`, rekeyTarget)
    .addHelpText(
      "after",
      `
To or from master-key, ASSISTANT_VAULT_MASTER_KEY must hold the passphrase (the new one, or the current one).
After a move to master-key, start the daemon with it set; after a move away from it, unset it.`,
    )
    .action(async (opts: { to: (typeof REKEY_TARGETS)[keyof typeof REKEY_TARGETS] }) => {
      const [{ rekeyVault, sourceName }, { effectiveEnv }] = await Promise.all([
        import("../vault/rekey.ts"),
        import("../config/envFile.ts"),
      ]);
      const done = await rekeyVault({ paths: ctx.paths, to: opts.to, env: effectiveEnv(ctx.paths, ctx.env) });
      const what = done.count === 1 ? "1 secret" : `${done.count} secrets`;
      ctx.stdout.write(
        `moved the vault (${what}) from ${sourceName(done.from, ctx.paths)} to ${sourceName(done.to, ctx.paths)}\n`,
      );
      for (const note of done.notes) ctx.stdout.write(`next: ${note}\n`);
      // The daemon re-reads vault.json on every call; only the master key lives in its environment.
      if (done.to === "master_key") {
        ctx.stdout.write(
          "next: restart the daemon with ASSISTANT_VAULT_MASTER_KEY set in its environment (not in assistant.env)\n",
        );
      } else if (done.from === "master_key") {
        ctx.stdout.write("next: then restart the daemon (`assistant restart`)\n");
      }
    });
}

/** The names `--to` accepts, as people type them, and the key source each means. */
const REKEY_TARGETS = { "master-key": "master_key", "key-file": "key_file", keyring: "keyring" } as const;

function rekeyTarget(value: string): (typeof REKEY_TARGETS)[keyof typeof REKEY_TARGETS] {
  const target = REKEY_TARGETS[value.replace(/_/g, "-") as keyof typeof REKEY_TARGETS];
  if (!target) throw new InvalidArgumentError(`expected ${Object.keys(REKEY_TARGETS).join(", ")}`);
  return target;
}
