// The option words in front of a command's operands, for the parsers that need to know where those operands start:
// awk's and sed's programs (inlineCode.ts, awkOptions.ts), the commands xargs and watch run (launchers.ts). Each
// parser says only what its own options mean; where options end, where an option's value is written and which long
// option an abbreviation names are read here, the same for all.

/**
 * Called for each option, a letter (`e` of `-e`, `-ne`) or a long name (`--expression`). `value()` takes the
 * option's value: what its own word holds after it (`-ecode`, `--expression=code`), else the next word, which is then
 * skipped; a further call takes the word after that (gawk's `-W source code`). `attached` is the own-word part
 * alone, for a value that never comes from the next word (`-d[file]`). For a letter, the answer says whether the
 * rest of its word belongs to it (ending the word) or holds more letters (`-bv` is `-b -v`).
 */
export type OptionReader = (option: string, value: () => string | undefined, attached: string | undefined) => boolean;

/** The index of the first operand: options end at `--` (not an operand itself), at `-` and at a word without a dash. */
export function firstOperand(args: readonly string[], read: OptionReader): number {
  let i = 0;
  let attached: string | undefined;
  const value = () => {
    const taken = attached ?? args[++i];
    attached = undefined;
    return taken;
  };
  for (; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") return i + 1;
    if (!arg.startsWith("-") || arg === "-") break;
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      attached = eq < 0 ? undefined : arg.slice(eq + 1); // `--name=` gives an empty value
      read(eq < 0 ? arg : arg.slice(0, eq), value, attached);
      continue;
    }
    for (let j = 1; j < arg.length; j++) {
      attached = arg.slice(j + 1) || undefined; // `-e` alone takes the next word
      if (read(arg[j]!, value, attached)) break;
    }
  }
  return i;
}

/**
 * The long option `given` (`--so`, `--source=x` cut at `=`) names among `names` (written without dashes), read as
 * getopt_long reads it: the name it spells, else the only one it begins; undefined when it begins none or several,
 * which getopt refuses.
 */
export function longOption(given: string, names: readonly string[]): string | undefined {
  const name = given.slice(2);
  if (name === "") return undefined;
  let match: string | undefined;
  let matches = 0;
  for (const candidate of names) {
    if (candidate === name) return candidate;
    if (candidate.startsWith(name)) {
      match = candidate;
      matches++;
    }
  }
  return matches === 1 ? match : undefined;
}

/** What awk's or sed's options say about its program. */
export interface ScriptOptions {
  /** Program text given by options (`-e`, `--source`, `--expression`). */
  code: string[];
  /** A program file (`-f`): the first operand is then data, not the program. */
  file: boolean;
  /** `--sandbox`: no command can run, whatever the program. */
  sandbox: boolean;
}

/** An OptionReader for awk or sed that writes what an option says about the program to `found`. */
export type ScriptOptionReader = (found: ScriptOptions, ...option: Parameters<OptionReader>) => boolean;
