import { type Launcher, launcherOf } from "./inlineCode.ts";
import { firstOperand, longOption } from "./options.ts";
import { DYNAMIC, type ShellDialect, scanShell } from "./shellCode.ts";

// The launcher rule: a command allowed by the policy must not run a command blocked_commands names through
// another program. Runners (env, xargs, find -exec, nice, timeout...) have every argument checked; shells and
// interpreters given code to run follow two rules:
// - allowed only by `*` (or run by a runner or shell without being listed themselves): a shell is refused
//   whatever its arguments, an interpreter when it gets inline code (or, inside shell code, code on stdin);
// - named in allowed_commands (the user's informed choice): their inline code is checked. Shell code is read
//   (shellCode.ts) and every command in it is checked like a command of its own; a command whose name only the
//   running shell knows (`$cmd`, `${a}m`, a glob) is refused. Other code is scanned for blocked names as words:
//   best effort, since `"r" + "m"` passes, and that is acceptable because the user chose to allow that
//   interpreter by name.
// Nothing here applies while blocked_commands is empty. Pure: no I/O, like the engine that calls it.

export interface LauncherPolicy {
  blocked: ReadonlySet<string>;
  /** allowed_commands as written: a shell or interpreter listed there by name was allowed knowingly. */
  allowed: ReadonlySet<string>;
  allowAll: boolean;
  /** The blocked names, for refusals that are not about one of them. */
  names: string;
}

/** The launcher policy of a tools policy, or null when nothing is blocked (then nothing is checked). */
export function launcherPolicy(allowed: readonly string[], blocked: readonly string[]): LauncherPolicy | null {
  if (blocked.length === 0) return null;
  return {
    blocked: new Set(blocked),
    allowed: new Set(allowed),
    allowAll: allowed.includes("*"),
    names: blocked.join(", "),
  };
}

/**
 * Commands that run another command given in their arguments: every argument is checked against
 * blocked_commands, so `env rm -rf /` or `sudo rm` is refused where `rm` is blocked.
 */
const COMMAND_RUNNERS = new Set([
  "env",
  "sudo",
  "doas",
  "su",
  "runuser",
  "xargs",
  "nice",
  "ionice",
  "nohup",
  "timeout",
  "stdbuf",
  "setsid",
  "chroot",
  "busybox",
  "command",
  "builtin",
  "exec",
  "time",
  "taskset",
  "chrt",
  "unbuffer",
  "watch",
  "strace",
  "ltrace",
  "flock",
  "script",
  "find",
  "noglob",
  "nocorrect",
  "hash", // `hash -p /bin/rm ls` makes `ls` run rm
]);
/** Runners that hand a string to `sh -c`: `watch 'cmd'`, `flock f -c 'cmd'`, `su -c`, `runuser -c`, `script -c`. */
const SHELL_STRING_RUNNERS = new Set(["watch", "flock", "su", "runuser", "script"]);
/** Shell builtins that run code given as words: `eval`, `trap`, `alias` (expanded in sh scripts), `.`/`source`. */
const CODE_BUILTINS = new Set(["eval", "trap", "alias", ".", "source"]);
const FIND_EXEC = new Set(["-exec", "-execdir", "-ok", "-okdir"]);
/** Words the command lines of one check may add up to (nesting multiplies them); past it the call is refused. */
const WORD_BUDGET = 20_000;

interface Scope {
  /** The program that runs this command line; null for run_command's own command. */
  via: string | null;
  /** Standard input may carry a program: inside shell code (pipes, here-documents). */
  stdin: boolean;
  /** The shell whose code this command line is part of: its builtins apply. */
  shell: { name: string; dialect: ShellDialect } | null;
}

/** The rule refusing `argv` (its program resolved to `executable`, not itself blocked), or null. */
export function launchRefusal(executable: string, argv: readonly string[], policy: LauncherPolicy): string | null {
  return new LaunchCheck(policy).line(executable, argv.slice(1), { via: null, stdin: false, shell: null });
}

function basename(word: string): string {
  return word.slice(word.lastIndexOf("/") + 1);
}

class LaunchCheck {
  readonly #policy: LauncherPolicy;
  #budget = WORD_BUDGET;

  constructor(policy: LauncherPolicy) {
    this.#policy = policy;
  }

  /** Checks one command line: `name` run with `args` inside `scope`. */
  line(name: string, args: readonly string[], scope: Scope): string | null {
    this.#budget -= args.length + 1;
    if (this.#budget < 0) return this.#refuse("too many nested commands to check");
    if (scope.via !== null) {
      if (name.includes(DYNAMIC)) return this.#refuse(`${scope.via} would run a command named only when it runs`);
      if (this.#policy.blocked.has(name)) return `blocked_commands: ${name} (run through ${scope.via})`;
    }
    if (scope.shell !== null && CODE_BUILTINS.has(name)) return this.#builtin(name, args, scope.shell);
    if (COMMAND_RUNNERS.has(name)) return this.#runner(name, args, scope);
    const launcher = launcherOf(name);
    return launcher === null ? null : this.#launcher(name, launcher, args, scope);
  }

  #refuse(reason: string): string {
    return `blocked_commands: ${this.#policy.names} (${reason})`;
  }

  #runner(name: string, given: readonly string[], scope: Scope): string | null {
    let args = given;
    let command = -1; // the argument xargs runs
    if (name === "env") {
      const split = splitEnvString(given);
      if (split === null) return this.#refuse("env -S with a string that cannot be read");
      args = split;
    } else if (name === "find") {
      args = given.map((a) => a.replaceAll("{}", DYNAMIC)); // replaced by file names, even inside code
    } else if (name === "xargs") {
      const xargs = xargsCommand(given);
      const replace = xargs.replace;
      if (replace !== null) args = given.map((a) => a.replaceAll(replace, DYNAMIC));
      command = xargs.command;
    }
    for (const arg of args) {
      const base = basename(arg);
      if (this.#policy.blocked.has(base)) return `blocked_commands: ${base} (run through ${name})`;
    }
    // An argument only the running shell knows (or find's and xargs's replacements) could name any command.
    const unknown =
      name === "find"
        ? args.some((a, i) => FIND_EXEC.has(a) && args[i + 1]?.includes(DYNAMIC) === true)
        : name === "xargs"
          ? args[command]?.includes(DYNAMIC) === true
          : args.some((a) => a.includes(DYNAMIC));
    if (unknown) return this.#refuse(`${name} would run a command named only when it runs`);
    const nested: Scope = { via: name, stdin: scope.stdin, shell: scope.shell };
    if (SHELL_STRING_RUNNERS.has(name)) {
      const code = shellString(name, args);
      if (code !== null) {
        const refused = this.line("sh", ["-c", code], nested);
        if (refused !== null) return refused;
      }
    }
    for (let i = 0; i < args.length; i++) {
      const base = basename(args[i]!);
      // A nested runner checks every argument after it; a shell or interpreter only its own program.
      if (COMMAND_RUNNERS.has(base) || (scope.shell !== null && CODE_BUILTINS.has(base))) {
        return this.line(base, args.slice(i + 1), nested);
      }
      if (launcherOf(base) !== null) {
        const refused = this.line(base, args.slice(i + 1), nested);
        if (refused !== null) return refused;
      }
    }
    return null;
  }

  #launcher(name: string, launcher: Launcher, args: readonly string[], scope: Scope): string | null {
    const explicit = this.#policy.allowed.has(name);
    if (!explicit && scope.via === null && !this.#policy.allowAll) return null; // the allow list refuses it
    const program = launcher.program(args);
    if (!explicit) {
      const runs = launcher.shell || program.kind === "code" || (program.kind === "stdin" && scope.stdin);
      if (!runs) return null;
      const how =
        scope.via === null
          ? "a shell or interpreter allowed by * could run it"
          : `${name} run through ${scope.via} could run it`;
      return this.#refuse(`${how}; name ${name} in allowed_commands to allow it`);
    }
    if (program.kind === "file") return null; // a script: the launcher was named knowingly
    if (program.kind === "stdin") {
      return scope.stdin ? this.#refuse(`${name} would read its program from standard input, unchecked`) : null;
    }
    for (const code of program.code) {
      const refused =
        launcher.check === "words" ? this.#words(name, code) : this.#shellCode(name, launcher.check, code);
      if (refused !== null) return refused;
    }
    return null;
  }

  #shellCode(name: string, dialect: ShellDialect, code: string): string | null {
    if (code.includes(DYNAMIC)) return this.#refuse(`${name}'s inline code is only known when it runs`);
    const scan = scanShell(code, dialect);
    if ("error" in scan) return this.#refuse(`${name}'s inline code cannot be checked: ${scan.error}`);
    for (const text of scan.opaque) {
      const refused = this.#words(name, text);
      if (refused !== null) return refused;
    }
    const inner: Scope = { via: name, stdin: true, shell: { name, dialect } };
    for (const words of scan.commands) {
      const refused = this.line(basename(words[0]!), words.slice(1), inner);
      if (refused !== null) return refused;
    }
    return null;
  }

  /** Best effort for code that is not read as shell code: a blocked name standing as a word refuses it. */
  #words(name: string, code: string): string | null {
    if (code.includes(DYNAMIC)) return this.#refuse(`${name}'s inline code is only known when it runs`);
    for (const blocked of this.#policy.blocked) {
      if (namedIn(code, blocked)) return `blocked_commands: ${blocked} (named in ${name}'s inline code)`;
    }
    return null;
  }

  #builtin(name: string, args: readonly string[], shell: NonNullable<Scope["shell"]>): string | null {
    const code = (text: string) => this.#shellCode(shell.name, shell.dialect, text);
    switch (name) {
      case "eval":
        return code(args.join(" "));
      case "trap": {
        const action = args.find((a) => a !== "--" && a !== "-p" && a !== "-l");
        return action === undefined || action === "-" ? null : code(action);
      }
      case "alias":
        for (const arg of args) {
          const eq = arg.indexOf("=");
          const refused = eq < 0 ? null : code(arg.slice(eq + 1));
          if (refused !== null) return refused;
        }
        return null;
      default: {
        // `.`/`source` run a script file; one only known when it runs, or standard input, cannot be checked
        const file = args[0];
        if (file === undefined) return null;
        if (file.includes(DYNAMIC) || /^\/(dev\/(stdin|fd\/)|proc\/[^/]+\/fd\/)/.test(file)) {
          return this.#refuse(`${shell.name} would source a script only known when it runs`);
        }
        return null;
      }
    }
  }
}

/** `env -S 'rm -rf x'` splits its string into more words: those words are checked too. */
function splitEnvString(args: readonly string[]): readonly string[] | null {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    let split: string | undefined;
    if (arg === "-S" || arg === "--split-string") split = args[++i];
    else if (arg.startsWith("--split-string=")) split = arg.slice("--split-string=".length);
    else if (/^-[a-zA-Z]*S./.test(arg) && !arg.startsWith("--")) split = arg.slice(arg.indexOf("S") + 1);
    if (split === undefined) {
      out.push(arg);
      continue;
    }
    const scan = scanShell(split, "posix");
    if ("error" in scan) return null;
    for (const words of scan.commands) out.push(...words);
  }
  return out;
}

const NAME_CHAR = /[A-Za-z0-9_-]/;

/** Whether `name` stands as a word in `text` (`os.system("rm x")`, `system("/bin/rm")`, `"rm"`). */
function namedIn(text: string, name: string): boolean {
  for (let at = text.indexOf(name); at >= 0; at = text.indexOf(name, at + 1)) {
    const before = text[at - 1];
    const after = text[at + name.length];
    if ((before === undefined || !NAME_CHAR.test(before)) && (after === undefined || !NAME_CHAR.test(after))) {
      return true;
    }
  }
  return false;
}

/** The string a runner hands to `sh -c`, or null when it runs its arguments directly. */
function shellString(name: string, args: readonly string[]): string | null {
  if (name === "watch") return watchString(args);
  // flock, su, runuser, script: `-c cmd`, `--command cmd`, `--command=cmd`
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--command" || arg === "--session-command") return args[i + 1] ?? DYNAMIC;
    if (arg.startsWith("--command=") || arg.startsWith("--session-command=")) return arg.slice(arg.indexOf("=") + 1);
    if (/^-[a-zA-Z]*c/.test(arg)) return arg.slice(arg.indexOf("c") + 1) || (args[i + 1] ?? DYNAMIC);
  }
  return null;
}

/** procps-ng watch's long options and the short option each is (watch 4.0, getopt `+bCcefd::ghq:n:prs:twvx`). */
const WATCH_LONG = new Map([
  ["beep", "b"],
  ["chgexit", "g"],
  ["color", "c"],
  ["differences", "d"],
  ["equexit", "q"],
  ["errexit", "e"],
  ["exec", "x"],
  ["follow", "f"],
  ["help", "h"],
  ["interval", "n"],
  ["no-color", "C"],
  ["no-rerun", "r"],
  ["no-title", "t"],
  ["no-wrap", "w"],
  ["precise", "p"],
  ["shotsdir", "s"],
  ["version", "v"],
]);
const WATCH_LONG_NAMES = [...WATCH_LONG.keys()];

/**
 * The string watch hands to `sh -c`: its operands joined, unless `-x`/`--exec` runs them directly (null). Options
 * are read as watch's getopt reads them: `-n`, `-q`, `-s` take a value, `-d` only the rest of its word, so `-dx`
 * is `-d` with the value `x` and still goes through sh. An option watch does not know stops it with an error.
 */
function watchString(args: readonly string[]): string | null {
  let exec = false;
  const command = firstOperand(args, (option, value) => {
    const letter = option.startsWith("--")
      ? (WATCH_LONG.get(longOption(option, WATCH_LONG_NAMES) ?? "") ?? "")
      : option;
    if (letter === "x") exec = true;
    else if (letter === "n" || letter === "q" || letter === "s") value();
    return letter === "d" || letter === "n" || letter === "q" || letter === "s"; // the rest of the word is the value
  });
  return exec || command >= args.length ? null : args.slice(command).join(" ");
}

/** xargs's replacement string (`-I {}`, `-i`, `--replace`) and the index of the command it runs. */
function xargsCommand(args: readonly string[]): { replace: string | null; command: number } {
  let replace: string | null = null;
  const command = firstOperand(args, (option, value, attached) => {
    if (option === "I" || option === "J") replace = value() ?? null;
    else if (option === "i" || option === "--replace") replace = attached || "{}";
    else if (XARGS_VALUES.has(option)) value();
    return "IJiadELnPsel".includes(option); // the rest of the word is its value
  });
  return { replace: replace || null, command };
}

/** xargs's options that take a value, besides the replacement string's. */
const XARGS_VALUES = new Set([
  ..."adELnPs",
  "--arg-file",
  "--delimiter",
  "--max-args",
  "--max-procs",
  "--max-chars",
  "--process-slot-var",
]);
