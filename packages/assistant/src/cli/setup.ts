import type { Command } from "commander";
import type { InitAnswers } from "../setup/answers.ts";
import { AppError } from "../util/errors.ts";
import { type CliContext, output, readStdin } from "./context.ts";

// Setup commands that work on the data directory without a daemon: `init`, `doctor`, `config validate` and
// `config env`. Only `doctor --advice` talks to the running daemon. Services are imported inside the actions.

export function registerSetupCommands(program: Command, ctx: CliContext): void {
  registerInit(program, ctx);
  registerDoctor(program, ctx);
  // Other areas add `config models`, `config provider`...: share one `config` command whoever registers first.
  const config =
    program.commands.find((command) => command.name() === "config") ??
    program.command("config").description("configuration files and persistent settings");
  registerConfigValidate(config, ctx);
  registerConfigEnv(config, ctx);
}

// ---- init ------------------------------------------------------------------------------------------------

function registerInit(program: Command, ctx: CliContext): void {
  program
    .command("init")
    .description("create the data directory and its starter files (asks a few questions)")
    .option("--defaults", "ask nothing: English, the embedded local model, name Assistant")
    .option("--force", "replace files that already exist")
    .option("--no-probe", "do not ask the local model server you choose (one that is not running yet)")
    .option("--json", "machine-readable output")
    .action(async (opts: { defaults?: boolean; force?: boolean; probe: boolean; json?: boolean }) => {
      const { initDataDir } = await import("../setup/init.ts");
      const answers = opts.defaults ? {} : await askInitQuestions(ctx, opts.probe);
      const result = initDataDir(ctx.paths, answers, { force: opts.force === true });
      output(ctx, opts.json, result, () => {
        const width = Math.max(...result.files.map((f) => f.action.length));
        const files = result.files.map(
          (f) => `  ${f.action.padEnd(width)}  ${f.file}${f.reason ? ` (${f.reason})` : ""}`,
        );
        const steps = result.nextSteps.map((step) => `  - ${step}`);
        return [`Data directory: ${result.dataDir}`, ...files, "", "Next steps:", ...steps].join("\n");
      });
    });
}

/**
 * The init questions. On a terminal each answer is checked at once and asked again when invalid; from a pipe
 * (scripts, tests) the answers are read one line each, an empty line takes the default, and an invalid answer
 * stops init before anything is written. A local server is asked (`probe`) whether it speaks the protocol of the
 * kind chosen and which models it has, which become the model question's default and its only valid answers.
 */
async function askInitQuestions(ctx: CliContext, probe: boolean): Promise<Partial<InitAnswers>> {
  const setup = await import("../setup/answers.ts");
  const { readSettingsOf } = await import("../config/settings.ts");
  const { createInterface } = await import("node:readline/promises");
  const interactive = ctx.stdin.isTTY === true;
  const rl = createInterface({
    input: ctx.stdin,
    ...(interactive ? { output: ctx.stdout, terminal: true } : { terminal: false }),
  });
  const lines = interactive ? undefined : rl[Symbol.asyncIterator]();
  const closed = new AbortController();
  rl.on("close", () => closed.abort());
  rl.on("SIGINT", () => rl.close());

  const ask = async (prompt: string): Promise<string> => {
    if (lines) {
      ctx.stdout.write(prompt);
      const next = await lines.next();
      const answer = next.done ? "" : next.value;
      ctx.stdout.write(`${answer}\n`); // echoed, so the transcript reads like a terminal session
      return answer;
    }
    try {
      return await rl.question(prompt, { signal: closed.signal });
    } catch {
      throw new AppError("invalid_request", "init cancelled; nothing was written");
    }
  };
  const askFor = async <T>(
    prompt: string,
    fallback: string | undefined,
    parse: (text: string) => T | Promise<T>,
  ): Promise<T> => {
    for (let attempt = 1; ; attempt++) {
      const text = (await ask(fallback ? `${prompt} [${fallback}]: ` : `${prompt}: `)).trim();
      try {
        return await parse(text === "" && fallback !== undefined ? fallback : text);
      } catch (error) {
        if (!interactive || attempt >= 5) throw error;
        ctx.stdout.write(`  ${(error as Error).message}\n`);
      }
    }
  };

  try {
    ctx.stdout.write("Setting up the assistant. Press Enter to keep the value in [brackets].\n");
    const name = await askFor("Name of your assistant", setup.DEFAULT_ANSWERS.name, setup.parseName);
    const { lang } = readSettingsOf(ctx.env, ["lang"]);
    const language = await askFor("Language, en or fr", languageFromEnv(lang, ctx.env), setup.parseLanguage);
    const menu = setup.PROVIDER_MENU.map((entry, i) => `  ${i + 1}) ${entry.name.padEnd(14)} ${entry.text}`);
    ctx.stdout.write(["Which model answers your chats?", ...menu, ""].join("\n"));
    const choice = await askFor("Provider", setup.DEFAULT_ANSWERS.provider, setup.parseMenuChoice);
    const provider = choice.provider;
    const answers: Partial<InitAnswers> = { name, language, provider };
    const { hasModel, listed, protocolOf, verifyModelServer } = await import("../llm/serverCheck.ts");
    let models: string[] | undefined;
    if (setup.isLocalServer(provider)) {
      answers.server_url = await askFor("Server URL", choice.url, async (text) => {
        const url = setup.parseUrl(text);
        if (probe) {
          const server = await verifyModelServer(provider, url, { instead: otherMenuChoice });
          models = server.models;
          ctx.stdout.write(`  it answers; ${listed(server.models, server.protocol)}\n`);
        }
        return url;
      });
    }
    if (provider !== "embedded") {
      const fallback = models?.[0] ?? setup.DEFAULT_MODELS[provider];
      answers.model = await askFor(fallback ? "Model" : `Model (as ${provider} names it)`, fallback, async (text) => {
        const model = setup.parseModel(text);
        if (models && setup.isLocalServer(provider) && !hasModel(models, model)) {
          const what = listed(models, protocolOf(provider));
          throw new AppError("invalid_request", `model: the server has no model "${model}"; ${what}`, {
            field: "model",
          });
        }
        return model;
      });
    }
    return answers;
  } finally {
    rl.close();
  }
}

/** A server of the other local kind answered: the menu line to choose instead. */
function otherMenuChoice(provider: "local_server" | "lowbit_server"): string {
  return provider === "local_server"
    ? "choose ollama (2) instead"
    : "choose openai_server (3) or llama_server (4) instead";
}

/** The language a person probably wants: French when ASSISTANT_LANG or their locale says so, else English. */
function languageFromEnv(lang: string | undefined, env: NodeJS.ProcessEnv): string {
  const locale = lang || env.LC_ALL || env.LANG || "";
  return locale.toLowerCase().startsWith("fr") ? "fr" : "en";
}

// ---- doctor ----------------------------------------------------------------------------------------------

function registerDoctor(program: Command, ctx: CliContext): void {
  program
    .command("doctor")
    .description("check the data directory, config, port, database and embedded model; exits 1 when a check fails")
    .option("--fix", "repair what can be repaired (missing starter files, default route, file permissions)")
    .option("--json", "machine-readable output")
    .option("--advice", "ask the running daemon for its checks and advice")
    .action(async (opts: { fix?: boolean; json?: boolean; advice?: boolean }, command: Command) => {
      if (opts.advice) {
        if (opts.fix) command.error("error: --advice asks the running daemon and cannot be combined with --fix");
        return doctorAdvice(ctx, opts.json);
      }
      const doctor = await import("../doctor/index.ts");
      const fixes = opts.fix ? doctor.applyFixes(ctx.paths, ctx.env) : undefined;
      const checks = await doctor.runChecks(ctx.paths, ctx.env);
      const report = { ...(fixes ? { fixes } : {}), checks, advice: doctor.adviceFor(checks) };
      output(
        ctx,
        opts.json,
        report,
        () => (fixes ? `${doctor.formatFixes(fixes)}\n\n` : "") + doctor.formatChecks(checks),
      );
      failIfAnyFailed(checks);
    });
}

async function doctorAdvice(ctx: CliContext, json: boolean | undefined): Promise<void> {
  const { connectDaemon, withDaemon } = await import("./daemonClient.ts");
  const { formatChecks } = await import("../doctor/format.ts");
  const what = "it cannot give advice";
  const client = await connectDaemon(ctx, what);
  const report = await withDaemon(what, () => client.getDoctorReport());
  output(ctx, json, report, () =>
    [formatChecks(report.checks), "", "Advice:", ...report.advice.map((line) => `  - ${line}`)].join("\n"),
  );
  failIfAnyFailed(report.checks);
}

function failIfAnyFailed(checks: Array<{ id: string; status: string }>): void {
  const failed = checks.filter((check) => check.status === "fail");
  if (failed.length > 0) {
    throw new AppError(
      "internal",
      `${failed.length} check(s) failed: ${failed.map((c) => c.id).join(", ")} (see above)`,
    );
  }
}

// ---- config validate -------------------------------------------------------------------------------------

function registerConfigValidate(config: Command, ctx: CliContext): void {
  config
    .command("validate")
    .description(
      "check every config file of the data directory; exits 1 naming the file, key and reason of each problem",
    )
    .option("--json", "machine-readable output")
    .action(async (opts: { json?: boolean }) => {
      const [{ validateConfigFiles }, { CONFIG_FILES }] = await Promise.all([
        import("../config/validate.ts"),
        import("../config/configFiles.ts"),
      ]);
      const reports = validateConfigFiles(ctx.paths);
      const invalid = reports.filter((r) => r.status === "invalid");
      const unknown = await unknownVariables(ctx, reports);
      output(ctx, opts.json, { valid: invalid.length === 0, files: reports, unknown_variables: unknown }, () =>
        reports
          .map((r) => {
            if (r.status === "invalid") return `INVALID  ${describe(r)}`;
            if (r.status === "ok") return `ok       ${r.file}`;
            const meaning =
              (CONFIG_FILES as Record<string, { whenMissing: string }>)[r.id]?.whenMissing ?? "no variables";
            return `missing  ${r.file}: ${meaning}`;
          })
          .join("\n"),
      );
      if (!opts.json) {
        const { describeUnknownEnvName } = await import("../config/envNames.ts");
        for (const name of unknown) ctx.stderr.write(`warning: ${describeUnknownEnvName(name)}\n`);
      }
      if (invalid.length > 0) {
        throw new AppError("config_invalid", `invalid configuration:\n  ${invalid.map(describe).join("\n  ")}`);
      }
    });
}

/** The unknown ASSISTANT_* names of the env files (none while an env file is itself invalid: that is reported). */
async function unknownVariables(ctx: CliContext, reports: Array<{ file: string; status: string }>) {
  const { unknownEnvNames } = await import("../config/envNames.ts");
  const envFiles = [ctx.paths.assistantEnv, ctx.paths.connectorsEnv];
  return reports.some((r) => envFiles.includes(r.file) && r.status === "invalid") ? [] : unknownEnvNames(ctx.paths);
}

function describe(report: { file: string; error?: { key: string; reason: string } }): string {
  return `${report.file}: ${report.error?.key ? `${report.error.key}: ` : ""}${report.error?.reason ?? "invalid"}`;
}

// ---- config env ------------------------------------------------------------------------------------------

function registerConfigEnv(config: Command, ctx: CliContext): void {
  const env = config
    .command("env")
    .description("persistent variables in assistant.env and connectors.env (not secrets)");

  env
    .command("list")
    .description(
      "every variable the assistant reads, with the value in force and where it comes from; flags bad values and variables nothing reads",
    )
    .option("--json", "machine-readable output, with each variable's default, allowed values and meaning")
    .action(async (opts: { json?: boolean }) => {
      const { listEnvVariables } = await import("../setup/envSettings.ts");
      const variables = listEnvVariables(ctx.paths, ctx.env);
      output(ctx, opts.json, { variables }, () => {
        const shown = variables.map((v) => (v.value === null ? v.key : `${v.key}=${v.value}`));
        const width = Math.min(60, Math.max(...shown.map((text) => text.length)));
        return variables
          .map((v, i) => {
            const where = v.value === null && v.source === "default" ? `default: ${v.default}` : v.source;
            const note = v.problem
              ? `  invalid: ${v.problem}`
              : v.kind === "planned"
                ? "  not read by this version"
                : v.kind === "unknown"
                  ? "  not a setting of this version"
                  : "";
            return `${shown[i]!.padEnd(width)}  (${where})${note}`;
          })
          .join("\n");
      });
      warnAboutSecrets(
        ctx,
        variables.filter((v) => v.source.endsWith(".env")),
      );
    });

  env
    .command("get <KEY>")
    .description("print the value of a variable (exits 1 when it is not set)")
    .action(async (key: string) => {
      const { getEnvSetting } = await import("../setup/envSettings.ts");
      const setting = getEnvSetting(ctx.paths, key);
      if (!setting) throw new AppError("not_found", `${key} is not set in assistant.env or connectors.env`);
      ctx.stdout.write(`${setting.value}\n`);
      warnAboutSecrets(ctx, [setting]);
    });

  env
    .command("set <KEY> [value]")
    .description("set a variable in assistant.env; without a value it is read from standard input")
    .action(async (key: string, value: string | undefined) => {
      const { assertSettableKey, setEnvSetting } = await import("../setup/envSettings.ts");
      assertSettableKey(key, true); // before waiting for a value on stdin
      if (value === undefined && ctx.stdin.isTTY) ctx.stderr.write(`Enter the value for ${key}, then press Ctrl-D:\n`);
      const { file } = setEnvSetting(ctx.paths, key, value ?? (await readStdin(ctx)));
      ctx.stdout.write(
        `set ${key} in ${file}; restart the daemon to apply it (\`assistant stop\` then \`assistant start\`)\n`,
      );
      if (ctx.env[key] !== undefined) {
        ctx.stderr.write(`note: ${key} is also set in your environment, which takes precedence over assistant.env\n`);
      }
    });

  registerConfigEnvUnset(env, ctx);
}

function registerConfigEnvUnset(env: Command, ctx: CliContext): void {
  env
    .command("unset <KEY>")
    .description("remove a variable from assistant.env and connectors.env (its default applies again)")
    .action(async (key: string) => {
      const { unsetEnvSetting } = await import("../setup/envSettings.ts");
      const { files } = unsetEnvSetting(ctx.paths, key);
      ctx.stdout.write(
        `removed ${key} from ${files.join(" and ")}; restart the daemon to apply it (\`assistant restart\`)\n`,
      );
      if (ctx.env[key] !== undefined) {
        ctx.stderr.write(`note: ${key} is still set in your environment, which takes precedence over assistant.env\n`);
      }
    });
}

function warnAboutSecrets(ctx: CliContext, variables: Array<{ key: string; secret: boolean }>): void {
  for (const v of variables.filter((item) => item.secret)) {
    ctx.stderr.write(
      `warning: ${v.key} looks like a secret; move it to the vault (\`assistant vault set ${v.key.toLowerCase()}\`) and delete it from the env file\n`,
    );
  }
}
