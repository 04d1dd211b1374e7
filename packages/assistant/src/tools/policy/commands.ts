import { accessSync, constants, realpathSync, statSync } from "node:fs";
import { basename, delimiter, isAbsolute, join, resolve } from "node:path";

// run_command's `command` is one string split into argv like a shell splits words, and never given to a shell.
// So nothing is expanded (no variables, globs, `~`, command substitution) and shell operators (`;`, `|`, `&&`,
// `>`, `$()`, backticks) are ordinary characters inside words: `ls; rm -rf /` runs `ls` with the argument `;`.

export class CommandParseError extends Error {
  override name = "CommandParseError";
}

const WHITESPACE = new Set([" ", "\t", "\n", "\r"]);

/**
 * Shell-like word splitting without expansion: whitespace separates words; '...' is literal; "..." is literal
 * except that a backslash escapes `"` and `\`; outside quotes a backslash escapes the next character.
 * Throws CommandParseError on a NUL byte, an unterminated quote or a trailing backslash.
 */
export function splitCommand(command: string): string[] {
  if (command.includes("\0")) throw new CommandParseError("command contains a NUL byte");
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let i = 0;
  while (i < command.length) {
    const c = command[i]!;
    if (WHITESPACE.has(c)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
      i++;
      continue;
    }
    inWord = true;
    if (c === "'") {
      const end = command.indexOf("'", i + 1);
      if (end < 0) throw new CommandParseError("unterminated single quote");
      word += command.slice(i + 1, end);
      i = end + 1;
    } else if (c === '"') {
      i++;
      for (;;) {
        if (i >= command.length) throw new CommandParseError("unterminated double quote");
        const d = command[i]!;
        if (d === '"') break;
        if (d === "\\" && (command[i + 1] === '"' || command[i + 1] === "\\")) {
          word += command[i + 1];
          i += 2;
        } else {
          word += d;
          i++;
        }
      }
      i++;
    } else if (c === "\\") {
      if (i + 1 >= command.length) throw new CommandParseError("trailing backslash");
      word += command[i + 1];
      i += 2;
    } else {
      word += c;
      i++;
    }
  }
  if (inWord) words.push(word);
  return words;
}

/** The fixed PATH commands are looked up in: never the daemon's environment, never the working directory. */
export const SAFE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

export type ResolvedExecutable = { name: string; path: string; explicitPath?: string } | { error: string };

/**
 * Finds argv[0]. A bare name is looked up on SAFE_PATH only. A name with a path separator (`/usr/bin/rm`,
 * `./ls`) is accepted only when it is the same file SAFE_PATH gives for its base name, so a script planted
 * as `./ls` cannot borrow the permission of `ls`; it is then matched by that base name and the path recorded.
 */
export function resolveExecutable(
  argv0: string,
  options: { cwd: string; searchPath?: string } = { cwd: "/" },
): ResolvedExecutable {
  if (argv0.length === 0) return { error: "empty command" };
  if (argv0.includes("\0")) return { error: "command contains a NUL byte" };
  const searchPath = options.searchPath ?? SAFE_PATH;
  const hasSeparator = argv0.includes("/") || (process.platform === "win32" && argv0.includes("\\"));
  if (!hasSeparator) {
    const found = findOnPath(argv0, searchPath);
    return found ? { name: argv0, path: found } : { error: `${argv0} is not found on the safe PATH (${searchPath})` };
  }
  const name = basename(argv0);
  if (argv0.endsWith("/") || name.length === 0 || name === "." || name === "..")
    return { error: `${argv0} names no executable` };
  const given = isAbsolute(argv0) ? argv0 : resolve(options.cwd, argv0);
  const expected = findOnPath(name, searchPath);
  if (!expected) return { error: `${name} is not found on the safe PATH (${searchPath})` };
  if (realOrNull(given) !== realOrNull(expected)) {
    return { error: `${argv0} is not the ${name} on the safe PATH (${expected}); refused` };
  }
  return { name, path: expected, explicitPath: argv0 };
}

function findOnPath(name: string, searchPath: string): string | null {
  for (const dir of searchPath.split(delimiter)) {
    if (!isAbsolute(dir)) continue; // an empty or relative entry would mean the working directory
    const candidate = join(dir, name);
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

function realOrNull(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}

export interface VaultInjection {
  vaultKey: string;
  envName: string;
}

const VAULT_KEY = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
const ENV_NAME = /^[A-Z_][A-Z0-9_]{0,127}$/;
/** Variables that change what runs or how it loads code: never set from the vault. */
const FORBIDDEN_ENV = new Set([
  "PATH",
  "HOME",
  "SHELL",
  "IFS",
  "ENV",
  "BASH_ENV",
  "CDPATH",
  "NODE_OPTIONS",
  "NODE_PATH",
  "PYTHONPATH",
  "PYTHONSTARTUP",
  "PERL5LIB",
  "PERL5OPT",
  "RUBYOPT",
  "RUBYLIB",
  "GIT_SSH_COMMAND",
  "GIT_EXEC_PATH",
  "PROMPT_COMMAND",
]);
const FORBIDDEN_ENV_PREFIXES = ["LD_", "DYLD_", "BASH_FUNC_"];

/**
 * Parses the leading `VAULT:<vault_key>=<ENV_NAME>` words of a run_command call (docs/tools.md#commands):
 * `VAULT:github_token=GH_TOKEN gh repo list`. Any word starting with `VAULT:` that is not well formed, an
 * environment name that steers loading (PATH, LD_*, NODE_OPTIONS...), or the same name twice is refused.
 */
export function parseVaultInjection(
  command: string,
): { injections: VaultInjection[]; command: string } | { error: string } {
  const injections: VaultInjection[] = [];
  let rest = command.replace(/^[ \t]+/, "");
  while (rest.startsWith("VAULT:")) {
    const end = rest.search(/[ \t\r\n]/);
    const word = end < 0 ? rest : rest.slice(0, end);
    const match = /^VAULT:([^=]*)=(.*)$/.exec(word);
    if (!match) return { error: `malformed vault injection ${JSON.stringify(word)} (VAULT:<vault_key>=<ENV_NAME>)` };
    const [, vaultKey = "", envName = ""] = match;
    if (!VAULT_KEY.test(vaultKey)) return { error: `invalid vault key ${JSON.stringify(vaultKey)}` };
    if (!ENV_NAME.test(envName)) return { error: `invalid environment variable name ${JSON.stringify(envName)}` };
    if (FORBIDDEN_ENV.has(envName) || FORBIDDEN_ENV_PREFIXES.some((p) => envName.startsWith(p))) {
      return { error: `environment variable ${envName} may not be set from the vault` };
    }
    if (injections.some((i) => i.envName === envName)) return { error: `${envName} is injected twice` };
    injections.push({ vaultKey, envName });
    rest = end < 0 ? "" : rest.slice(end).replace(/^[ \t\r\n]+/, "");
  }
  if (injections.length > 0 && rest.length === 0) return { error: "vault injection without a command" };
  return { injections, command: rest };
}
