import { AWK_READINGS } from "./awkOptions.ts";
import { firstOperand, type ScriptOptionReader, type ScriptOptions } from "./options.ts";
import { DYNAMIC, type ShellDialect } from "./shellCode.ts";

// Shells and interpreters, and where each takes the program it runs from: inline code in its arguments
// (`sh -c`, `python3 -c`, `perl -e`, `node -e`, an awk program...), a script file, or standard input. Options are
// read the way each program reads them, erring towards finding inline code: an option not known to take no value
// may take the next word, so that word never ends the option scan as the script's name.

/** Where a launcher takes its program from. */
export type Program =
  | { kind: "code"; code: readonly string[] }
  | { kind: "file" } // a script file, or nothing that can run a command
  | { kind: "stdin" };

export interface Launcher {
  /** A shell: running commands is its only job, so `*` never allows it while a command is blocked. */
  shell: boolean;
  /** How its inline code is checked once it is named in allowed_commands: read as shell code, or scanned for names. */
  check: ShellDialect | "words";
  program(args: readonly string[]): Program;
}

const FILE: Program = { kind: "file" };
const STDIN: Program = { kind: "stdin" };

interface OptionSpec {
  /** Short options whose value is inline code (`c` for python). */
  code: string;
  /** Short options taking a value: the rest of the word, else the next word. */
  value: string;
  /** Short options whose value is the following characters of a class (perl `-l0`, `-CSD`). */
  classes?: Readonly<Record<string, RegExp>>;
  /** Short options that take no value. */
  flags: string;
  /** Short option whose value is the script (php -f): what follows belongs to it. */
  script?: string;
  /** Long options whose value is inline code. */
  codeLong?: readonly string[];
  /** Long options that take no value. */
  flagLong?: readonly string[];
  /** Whole words that are code options (node's `-pe`). */
  codeWords?: readonly string[];
  /** python's `-m`: the module takes the rest; those listed run their arguments as code (`-m timeit`). */
  module?: { letter: string; code: ReadonlySet<string> };
}

/** The program of an interpreter called with `args`, its options read by `spec`. */
function optionProgram(spec: OptionSpec, args: readonly string[]): Program {
  const code: string[] = [];
  const result = (other: Program): Program => (code.length > 0 ? { kind: "code", code } : other);
  let pendingValue = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") return result(i + 1 < args.length ? FILE : STDIN);
    if (arg === "-") return result(STDIN);
    if (!arg.startsWith("-")) {
      if (pendingValue) {
        pendingValue = false;
        continue;
      }
      return result(FILE); // the script; the words after it are its own
    }
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      const name = eq < 0 ? arg : arg.slice(0, eq);
      if (spec.codeLong?.includes(name)) code.push(eq < 0 ? (args[++i] ?? DYNAMIC) : arg.slice(eq + 1));
      else pendingValue = eq < 0 && !spec.flagLong?.includes(name);
      continue;
    }
    if (spec.codeWords?.includes(arg)) {
      code.push(args[++i] ?? DYNAMIC);
      continue;
    }
    pendingValue = false;
    for (let j = 1; j < arg.length; j++) {
      const letter = arg[j]!;
      const rest = arg.slice(j + 1);
      if (spec.code.includes(letter)) {
        code.push(rest || (args[++i] ?? DYNAMIC)); // a missing value is appended later (xargs): unknown code
        break;
      }
      if (letter === spec.module?.letter) {
        const module = rest || args[++i];
        if (module !== undefined && spec.module.code.has(module)) code.push(args.slice(i + 1).join(" ") || DYNAMIC);
        return result(FILE);
      }
      if (letter === spec.script) return result(FILE);
      if (spec.value.includes(letter)) {
        pendingValue = rest.length === 0;
        break;
      }
      const chars = spec.classes?.[letter];
      if (chars) while (j + 1 < arg.length && chars.test(arg[j + 1]!)) j++;
      else if (!spec.flags.includes(letter)) pendingValue = true; // unknown: it may take the next word
    }
  }
  return result(STDIN);
}

/** sh, bash, dash, zsh, ksh...: `-c` makes the first operand the program; `-s` or no operand reads stdin. */
function posixShellProgram(args: readonly string[]): Program {
  let command = false;
  let stdin = false;
  let i = 0;
  for (; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--" || arg === "-") {
      i++;
      break;
    }
    if (arg.startsWith("--")) {
      if (arg === "--rcfile" || arg === "--init-file") i++;
      continue;
    }
    if ((arg[0] !== "-" && arg[0] !== "+") || arg.length < 2) break;
    let values = 0; // `-o name`, `-O name`
    for (const letter of arg.slice(1)) {
      if (letter === "c") command = true;
      else if (letter === "s") stdin = true;
      else if (letter === "o" || letter === "O") values++;
    }
    i += values;
  }
  if (command) return { kind: "code", code: [args[i] ?? DYNAMIC] };
  return stdin || i >= args.length ? STDIN : FILE;
}

/** PowerShell's base64 `-EncodedCommand` (and its prefixes): code that cannot be read here. */
const ENCODED_COMMAND =
  /^-(e|ec|en|enc|enco|encod|encode|encoded|encodedc|encodedco|encodedcom|encodedcomm|encodedcomma|encodedcomman|encodedcommand)$/i;

/** csh, tcsh, pwsh, nu, elvish, xonsh: their words are only scanned for names, so every argument counts as code. */
function otherShellProgram(args: readonly string[]): Program {
  if (args.some((a) => ENCODED_COMMAND.test(a))) return { kind: "code", code: [DYNAMIC] };
  return args.some((a) => !a.startsWith("-")) ? { kind: "code", code: [args.join(" ")] } : STDIN;
}

/** deno and bun: eval-style subcommands and options run their arguments. */
function subcommandProgram(codeWords: ReadonlySet<string>, args: readonly string[]): Program {
  const runsCode = args.some((a) => codeWords.has(a) || a.startsWith("--eval=") || a.startsWith("--print="));
  if (runsCode) return { kind: "code", code: [args.join(" ")] };
  return args.some((a) => !a.startsWith("-")) ? FILE : STDIN;
}

/**
 * awk's and sed's program: given by options, else the first operand unless read from a file; code only when
 * `runs` finds a way to start a process in it. `read` is firstOperand's reader, writing what it finds to `found`.
 */
function scriptProgram(args: readonly string[], runs: (program: string) => boolean, read: ScriptOptionReader): Program {
  const found: ScriptOptions = { code: [], file: false, sandbox: false };
  const operand = firstOperand(args, (option, value, attached) => read(found, option, value, attached));
  if (!found.file && found.code.length === 0) found.code.push(args[operand] ?? DYNAMIC);
  if (found.sandbox || !found.code.some(runs)) return FILE;
  return { kind: "code", code: found.code };
}

/**
 * awk's program is its first operand unless `-f` names a file. It can start a process only through `system`,
 * a pipe (`print | "cmd"`, `"cmd" | getline`, `|&`) or gawk's `@` (indirect calls, `@load`); a program without
 * any of these cannot, so `awk '{print $1}'` stays an ordinary command. Regular expressions and strings are not
 * told apart from code: a `|` in them counts too, which only refuses more. Which word is the program depends on
 * how that awk reads its options (awkOptions.ts): the program each of its `readings` finds is checked, and the
 * command counts as inline code when any of them can start a process.
 */
function awkProgram(readings: ReadonlyArray<() => ScriptOptionReader>, args: readonly string[]): Program {
  const code = new Set<string>();
  for (const reader of readings) {
    const program = scriptProgram(args, awkRunsCommands, reader());
    if (program.kind === "code") for (const text of program.code) code.add(text);
  }
  return code.size === 0 ? FILE : { kind: "code", code: [...code] };
}

function awkRunsCommands(program: string): boolean {
  return (
    program.includes(DYNAMIC) ||
    program.includes("system") ||
    program.includes("@") ||
    program.replaceAll("||", "").includes("|")
  );
}

/** sed's script is `-e`/`--expression` or its first operand; it runs commands only through GNU's `e`. */
function sedProgram(args: readonly string[]): Program {
  return scriptProgram(args, sedRunsCommands, (found, option, value) => {
    if (option === "e" || option === "--expression") found.code.push(value() ?? DYNAMIC);
    else if (option === "--sandbox") found.sandbox = true;
    else if (option === "f" || option === "l" || option === "--file" || option === "--line-length") value();
    if (option === "f" || option === "--file") found.file = true;
    return "efli".includes(option); // the rest of the word is its value (`-i.bak`)
  });
}

/**
 * Whether a sed script can run a command: GNU sed's `e` command or the `e` flag of `s///`. The script is read
 * command by command; anything not understood counts as running one.
 */
export function sedRunsCommands(script: string): boolean {
  if (script.includes(DYNAMIC)) return true;
  let i = 0;
  const n = script.length;
  const skipTo = (chars: string) => {
    while (i < n && !chars.includes(script[i]!)) i++;
  };
  /**
   * Past a delimited part, false when it is unterminated. In a regex a bracket expression is literal up to its
   * `]` (a first `]`, `[:class:]` and a backslash included) and may hold the delimiter, as in GNU sed.
   */
  const delimited = (delimiter: string, regex: boolean): boolean => {
    while (i < n) {
      const c = script[i]!;
      if (c === delimiter) {
        i++;
        return true;
      }
      if (c === "\\") i += 2;
      else if (c === "[" && regex) {
        i++;
        if (script[i] === "^") i++;
        if (script[i] === "]") i++;
        while (i < n && script[i] !== "]") {
          const inner = script[i + 1];
          if (script[i] === "[" && (inner === ":" || inner === "." || inner === "=")) {
            const close = script.indexOf(`${inner}]`, i + 2);
            if (close < 0) return false;
            i = close + 2;
          } else {
            i++;
          }
        }
        i++;
      } else {
        i++;
      }
    }
    return false;
  };
  const address = (): boolean => {
    const c = script[i];
    if (c === undefined) return true;
    if (/[0-9$+~]/.test(c)) {
      i++;
      while (i < n && /[0-9~]/.test(script[i]!)) i++;
      return true;
    }
    if (c === "/" || c === "\\") {
      const delimiter = c === "/" ? "/" : script[i + 1];
      if (delimiter === undefined || delimiter === "\n") return false;
      i += c === "/" ? 1 : 2;
      if (!delimited(delimiter, true)) return false;
      while (i < n && (script[i] === "I" || script[i] === "M")) i++;
    }
    return true;
  };
  while (i < n) {
    while (i < n && /[\s;]/.test(script[i]!)) i++;
    if (i >= n) break;
    if (!address()) return true;
    if (script[i] === ",") {
      i++;
      if (!address()) return true;
    }
    while (i < n && /[\s!]/.test(script[i]!)) i++;
    const command = script[i++];
    if (command === undefined) return true;
    switch (command) {
      case "e":
        return true;
      case "{":
      case "}":
      case "=":
      case "d":
      case "D":
      case "F":
      case "g":
      case "G":
      case "h":
      case "H":
      case "n":
      case "N":
      case "p":
      case "P":
      case "x":
      case "z":
        break;
      case "#":
      case "a":
      case "i":
      case "c":
      case "r":
      case "R":
      case "w":
      case "W":
        // to the end of the line (a/i/c text continues over lines ending in a backslash)
        for (;;) {
          skipTo("\n");
          if (!"aic".includes(command) || script[i - 1] !== "\\") break;
          i++;
        }
        continue;
      case ":":
      case "b":
      case "t":
      case "T":
      case "v":
        skipTo(";\n");
        continue;
      case "l":
      case "L":
      case "q":
      case "Q":
        while (i < n && /[\s0-9]/.test(script[i]!) && script[i] !== "\n") i++;
        break;
      case "s":
      case "y": {
        const delimiter = script[i++];
        if (delimiter === undefined || delimiter === "\n" || delimiter === "\\") return true;
        if (!delimited(delimiter, command === "s") || !delimited(delimiter, false)) return true;
        if (command === "s") {
          while (i < n && /[gpiImM0-9e]/.test(script[i]!)) if (script[i++] === "e") return true;
          if (script[i] === "w") {
            skipTo("\n");
            continue;
          }
        }
        break;
      }
      default:
        return true;
    }
    while (i < n && (script[i] === " " || script[i] === "\t")) i++;
    if (i < n && !";\n}#".includes(script[i]!)) return true;
  }
  return false;
}

const PYTHON: OptionSpec = {
  code: "c",
  value: "WXQ",
  flags: "bBdEhiIOPqRsSuvVx?",
  flagLong: ["--help", "--version", "--help-env", "--help-xoptions", "--help-all"],
  module: { letter: "m", code: new Set(["timeit"]) },
};
const PERL: OptionSpec = {
  code: "eE",
  value: "iIMmxdDVF",
  classes: { "0": /[0-9a-fA-FxX]/, l: /[0-7]/, C: /[0-9IOESioDALa]/ },
  flags: "acnpsStTuUvwWXhg",
};
const RUBY: OptionSpec = {
  code: "e",
  value: "CEFIKrxi",
  classes: { "0": /[0-7]/, T: /[0-9]/, W: /[0-9]/ },
  flags: "acdlnpsSvwyhU",
};
const NODE: OptionSpec = {
  code: "ep",
  value: "rC",
  flags: "icvh",
  codeLong: ["--eval", "--print"],
  codeWords: ["-pe", "-ep"],
  flagLong: [
    "--check",
    "--interactive",
    "--version",
    "--help",
    "--no-warnings",
    "--no-deprecation",
    "--trace-warnings",
    "--trace-deprecation",
    "--throw-deprecation",
    "--pending-deprecation",
    "--enable-source-maps",
    "--expose-gc",
    "--inspect",
    "--inspect-brk",
    "--watch",
    "--test",
    "--preserve-symlinks",
    "--abort-on-uncaught-exception",
    "--experimental-vm-modules",
    "--experimental-strip-types",
    "--no-experimental-strip-types",
    "--experimental-transform-types",
    "--frozen-intrinsics",
    "--jitless",
  ],
};
const R_FLAGS = [
  "--vanilla",
  "--verbose",
  "--no-environ",
  "--no-site-file",
  "--no-init-file",
  "--restore",
  "--no-restore",
  "--save",
  "--no-save",
  "--quiet",
  "--silent",
  "--slave",
  "--no-echo",
  "--interactive",
];
const INTERPRETERS: ReadonlyArray<[readonly string[], OptionSpec]> = [
  [["python", "pypy", "ipython"], PYTHON],
  [["perl"], PERL],
  [["ruby", "jruby"], RUBY],
  [["node", "nodejs"], NODE],
  [["php"], { code: "rBRE", value: "cdFztS", flags: "aChHilmnqsvw", script: "f" }],
  [["lua"], { code: "e", value: "l", flags: "ivEW" }],
  [["luajit"], { code: "e", value: "ljO", flags: "ivE" }],
  [["Rscript"], { code: "e", value: "", flags: "", flagLong: R_FLAGS }],
  [["R"], { code: "e", value: "dg", flags: "qsvh", script: "f", flagLong: R_FLAGS }],
  [["osascript"], { code: "e", value: "ls", flags: "i" }],
  [["expect"], { code: "c", value: "bD", flags: "dinNv", script: "f" }],
  [["tclsh", "wish", "jimsh"], { code: "", value: "", flags: "" }],
  [["julia"], { code: "eE", value: "JLCtpO", flags: "iqvh", codeLong: ["--eval", "--print"] }],
  [["elixir", "iex"], { code: "e", value: "r", flags: "v", codeLong: ["--eval"] }],
  [["guile"], { code: "c", value: "lLex", flags: "sqhv" }],
  [["racket"], { code: "ei", value: "ftrlpkSmI", flags: "nvh", codeLong: ["--eval"] }],
  [["sbcl"], { code: "", value: "", flags: "", codeLong: ["--eval"] }],
];

const LAUNCHERS = new Map<string, Launcher>();
for (const name of [
  "sh",
  "bash",
  "rbash",
  "dash",
  "zsh",
  "ksh",
  "mksh",
  "pdksh",
  "oksh",
  "lksh",
  "ash",
  "yash",
  "posh",
]) {
  LAUNCHERS.set(name, { shell: true, check: "posix", program: posixShellProgram });
}
const FISH: OptionSpec = {
  code: "cC",
  value: "dofp",
  flags: "ilnNPvh",
  codeLong: ["--command", "--init-command"],
};
LAUNCHERS.set("fish", { shell: true, check: "fish", program: (args) => optionProgram(FISH, args) });
for (const name of ["csh", "tcsh", "pwsh", "powershell", "nu", "elvish", "xonsh"]) {
  LAUNCHERS.set(name, { shell: true, check: "words", program: otherShellProgram });
}
for (const [names, spec] of INTERPRETERS) {
  for (const name of names) {
    LAUNCHERS.set(name, { shell: false, check: "words", program: (args) => optionProgram(spec, args) });
  }
}
const DENO = new Set(["eval", "--eval", "-e"]);
const BUN = new Set(["exec", "-e", "--eval", "-p", "--print"]);
LAUNCHERS.set("deno", { shell: false, check: "words", program: (args) => subcommandProgram(DENO, args) });
LAUNCHERS.set("bun", { shell: false, check: "words", program: (args) => subcommandProgram(BUN, args) });
for (const [name, readings] of AWK_READINGS) {
  LAUNCHERS.set(name, { shell: false, check: "words", program: (args) => awkProgram(readings, args) });
}
for (const name of ["sed", "gsed"]) LAUNCHERS.set(name, { shell: false, check: "words", program: sedProgram });

/** The shell or interpreter `name` is (`python3.11` and `perl5.36` are python and perl), or null. */
export function launcherOf(name: string): Launcher | null {
  const exact = LAUNCHERS.get(name);
  if (exact !== undefined) return exact;
  const last = name.charCodeAt(name.length - 1);
  if (!((last >= 48 && last <= 57) || last === 46)) return null; // no version suffix
  return LAUNCHERS.get(name.replace(/[\d.]+$/, "")) ?? null;
}
