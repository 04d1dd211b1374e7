import { mkdirSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { StringDecoder } from "node:string_decoder";
import { z } from "zod";
import { type ProcessTreeResult, runProcessTree } from "../childProcess.ts";
import { UNSANDBOXED_WARNING } from "../commandSandbox.ts";
import {
  CommandParseError,
  parseVaultInjection,
  resolveExecutable,
  SAFE_PATH,
  splitCommand,
} from "../policy/commands.ts";
import { resolveRequestPath } from "../policy/paths.ts";
import { defineTool, type ToolContext, ToolFailure } from "../tool.ts";

/** Timeout when tools_policy.yaml sets no command_timeout_secs; the policy value is a ceiling either way. */
export const DEFAULT_COMMAND_TIMEOUT_SECS = 60;
/** Output kept per stream; passing it kills the command. */
export const MAX_CAPTURE_BYTES = 1024 * 1024;
/** Progress is streamed for this many lines per call, then only the final result carries the output. */
const MAX_PROGRESS_LINES = 1000;
const MAX_PROGRESS_LINE_CHARS = 2000;
/** Trailing fragments of a secret shorter than this are left alone (they would match ordinary text). */
const MIN_FRAGMENT = 4;

interface Secret {
  key: string;
  value: string;
}

export const runCommandTool = defineTool({
  name: "run_command",
  description:
    "Run one program and get its exit code, stdout and stderr. `command` is split into words like a shell " +
    "would split them (quotes and backslashes work) but it is NEVER run by a shell: there are no pipes, " +
    "redirects, `;`/`&&`, globs, `~`, variables or command substitution; such characters reach the program as " +
    "plain arguments. Run one program per call (use `sh -c '...'` only if sh is allowed). The program must be in " +
    "allowed_commands and is looked up on a fixed system PATH; the call may wait for the user's approval. `cwd` " +
    "(default: the assistant's working directory) must be a readable directory. The environment is minimal: to " +
    "give the program a secret from the vault, start the command with `VAULT:<vault_key>=<ENV_NAME> `, e.g. " +
    "`VAULT:github_token=GH_TOKEN gh repo list`; the secret never appears in the output. Output over 1 MiB per " +
    "stream or running past the timeout kills the program.",
  resource: "command",
  parameters: z.strictObject({
    command: z.string().min(1).max(8192).describe("The program and its arguments, e.g. `git status --short`"),
    cwd: z.string().min(1).max(4096).optional().describe("Working directory for the program"),
    timeout_secs: z
      .number()
      .int()
      .min(1)
      .max(3600)
      .optional()
      .describe("Seconds before the program is killed; can only lower the policy's command_timeout_secs"),
  }),
  async execute(args, ctx) {
    const vault = parseVaultInjection(args.command);
    if ("error" in vault) throw new ToolFailure(vault.error);
    let argv: string[];
    try {
      argv = splitCommand(vault.command);
    } catch (error) {
      if (error instanceof CommandParseError) throw new ToolFailure(`cannot parse the command: ${error.message}`);
      throw error;
    }
    if (argv.length === 0) throw new ToolFailure("empty command");

    let cwd: string;
    if (args.cwd !== undefined) {
      const resolved = resolveRequestPath(args.cwd, { cwd: ctx.cwd });
      if ("error" in resolved) throw new ToolFailure(resolved.error);
      cwd = resolved.path;
    } else if (ctx.policy?.run_command_default_cwd_workspace) {
      cwd = ctx.workspace;
    } else {
      cwd = ctx.cwd;
    }

    const executable = resolveExecutable(argv[0]!, { cwd });
    if ("error" in executable) throw new ToolFailure(executable.error);
    await ctx.permit({ kind: "command", executable: executable.name, argv });

    if (args.cwd !== undefined) {
      await ctx.permit({ kind: "read", path: cwd });
      let isDirectory: boolean;
      try {
        isDirectory = statSync(cwd).isDirectory();
      } catch {
        throw new ToolFailure(`working directory ${cwd} does not exist`);
      }
      if (!isDirectory) throw new ToolFailure(`working directory ${cwd} is not a directory`);
    } else if (cwd === ctx.workspace) {
      try {
        mkdirSync(cwd, { recursive: true });
      } catch (error) {
        throw new ToolFailure(
          `cannot create the workspace ${cwd}: ${(error as NodeJS.ErrnoException).code ?? "error"}`,
        );
      }
    }

    const secrets: Secret[] = [];
    const env = minimalEnv(ctx.env);
    for (const { vaultKey, envName } of vault.injections) {
      const value = ctx.secret(vaultKey);
      if (value === null)
        throw new ToolFailure(`vault key ${vaultKey} is not set; add it with \`assistant vault set ${vaultKey}\``);
      env[envName] = value;
      secrets.push({ key: vaultKey, value });
    }

    const ceiling = ctx.policy?.command_timeout_secs ?? DEFAULT_COMMAND_TIMEOUT_SECS;
    const timeoutSecs = Math.min(args.timeout_secs ?? ceiling, ceiling);
    if (ctx.signal.aborted) throw new ToolFailure("cancelled");

    const sandbox = ctx.sandbox();
    let program = { file: executable.path, args: argv.slice(1) };
    if (sandbox.available) {
      const wrapped = sandbox.sandbox.wrap(program.file, program.args, cwd);
      if ("error" in wrapped) throw new ToolFailure(wrapped.error);
      program = wrapped;
    }
    const progress = progressStream(ctx, secrets);
    let result: ProcessTreeResult;
    try {
      result = await runProcessTree(program.file, program.args, {
        cwd,
        env,
        timeoutMs: timeoutSecs * 1000,
        maxBytes: MAX_CAPTURE_BYTES,
        signal: ctx.signal,
        onData: progress.push,
      });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new ToolFailure(`cannot start ${executable.path}: ${code ?? "error"}`);
    }
    progress.end();
    if (result.killed === "aborted") throw new ToolFailure("cancelled");

    const stdout = redactSecrets(result.stdout.toString("utf8"), secrets);
    const stderr = redactSecrets(result.stderr.toString("utf8"), secrets);
    const lines = [`$ ${vault.command}`, statusLine(result, timeoutSecs)];
    if (!sandbox.available && firstUnsandboxed(ctx)) lines.push(`note: ${UNSANDBOXED_WARNING} (${sandbox.reason})`);
    lines.push(section("stdout", stdout, result.overflow === "stdout"));
    lines.push(section("stderr", stderr, result.overflow === "stderr"));
    return { text: lines.join("\n"), untrusted: `output of ${executable.name}` };
  },
});

/** Sessions (or tasks) already told that commands are not sandboxed; bounded, oldest forgotten first. */
const warned = new Set<string>();
const MAX_WARNED = 1000;

function firstUnsandboxed(ctx: ToolContext): boolean {
  const key = ctx.sessionId ?? ctx.taskId ?? "";
  if (warned.has(key)) return false;
  warned.add(key);
  if (warned.size > MAX_WARNED) warned.delete(warned.values().next().value as string);
  return true;
}

/** PATH, HOME, the locale and TERM: never the daemon's own environment, which holds keys. */
function minimalEnv(daemonEnv: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: SAFE_PATH,
    HOME: daemonEnv.HOME || homedir(),
    LANG: daemonEnv.LANG || "C.UTF-8",
    TERM: "dumb",
  };
  if (daemonEnv.LC_ALL) env.LC_ALL = daemonEnv.LC_ALL;
  if (process.platform === "win32") {
    // Windows programs cannot start without these.
    for (const name of ["SystemRoot", "windir", "COMSPEC"]) {
      const value = daemonEnv[name] ?? process.env[name];
      if (value) env[name] = value;
    }
  }
  return env;
}

function statusLine(result: ProcessTreeResult, timeoutSecs: number): string {
  if (result.killed === "timeout") return `killed: timeout after ${timeoutSecs} s`;
  if (result.killed === "output") return `killed: output over ${MAX_CAPTURE_BYTES / 1024 / 1024} MiB`;
  if (result.code !== null) return `exit code ${result.code}`;
  return `killed by signal ${result.signal ?? "unknown"}`;
}

function section(name: string, text: string, cut: boolean): string {
  const body = text.length === 0 ? "(empty)" : text.endsWith("\n") ? text.slice(0, -1) : text;
  const note = cut ? `\n[${name} cut at ${MAX_CAPTURE_BYTES} bytes; the program was killed]` : "";
  return `--- ${name} ---\n${body}${note}`;
}

/**
 * Replaces every injected secret (and each long line of a multi-line one) with `[REDACTED:<vault_key>]`, and a
 * trailing fragment of at least 4 characters that starts a secret: output cut off in the middle of the value.
 */
export function redactSecrets(text: string, secrets: readonly Secret[]): string {
  let out = text;
  for (const { key, value } of secrets) {
    if (value.length === 0) continue;
    const marker = `[REDACTED:${key}]`;
    if (out.includes(value)) out = out.split(value).join(marker);
    if (value.includes("\n")) {
      for (const line of value.split(/\r?\n/)) {
        const piece = line.trim();
        if (piece.length >= 8 && out.includes(piece)) out = out.split(piece).join(marker);
      }
    }
  }
  for (const { key, value } of secrets) {
    for (let n = Math.min(value.length - 1, out.length); n >= MIN_FRAGMENT; n--) {
      if (out.endsWith(value.slice(0, n))) {
        out = `${out.slice(0, out.length - n)}[REDACTED:${key}]`;
        break;
      }
    }
  }
  return out;
}

/** Turns output chunks into redacted progress lines, a bounded number of them. */
function progressStream(ctx: ToolContext, secrets: readonly Secret[]) {
  const state = {
    stdout: { decoder: new StringDecoder("utf8"), pending: "", skipping: false },
    stderr: { decoder: new StringDecoder("utf8"), pending: "", skipping: false },
  };
  let sent = 0;
  const emit = (stream: "stdout" | "stderr", line: string) => {
    if (sent > MAX_PROGRESS_LINES) return;
    sent++;
    if (sent > MAX_PROGRESS_LINES) {
      ctx.progress("[further output is not streamed; it is in the result]");
      return;
    }
    const text = redactSecrets(line.endsWith("\r") ? line.slice(0, -1) : line, secrets);
    ctx.progress(stream === "stderr" ? `stderr: ${text}` : text);
  };
  return {
    push(stream: "stdout" | "stderr", chunk: Buffer) {
      if (sent > MAX_PROGRESS_LINES) return;
      const s = state[stream];
      let text = s.decoder.write(chunk);
      for (;;) {
        const nl = text.indexOf("\n");
        if (nl < 0) break;
        if (!s.skipping) emit(stream, s.pending + text.slice(0, nl));
        s.pending = "";
        s.skipping = false;
        text = text.slice(nl + 1);
      }
      if (s.skipping) return;
      s.pending += text;
      if (s.pending.length > MAX_PROGRESS_LINE_CHARS) {
        // A very long line: show its start (redacted before it is cut, then any cut-off secret start) and skip
        // the rest of it.
        const cut = redactSecrets(s.pending, secrets).slice(0, MAX_PROGRESS_LINE_CHARS);
        emit(stream, `${redactSecrets(cut, secrets)}...`);
        s.pending = "";
        s.skipping = true;
      }
    },
    end() {
      for (const stream of ["stdout", "stderr"] as const) {
        const s = state[stream];
        const rest = s.pending + s.decoder.end();
        if (!s.skipping && rest.length > 0) emit(stream, rest);
      }
    },
  };
}
