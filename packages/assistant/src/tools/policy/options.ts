// The option words in front of a command's operands, for the parsers that need to know where those operands start:
// awk's and sed's programs (inlineCode.ts), the command xargs runs (launchers.ts). Each parser says only what its
// own options mean; where options end and where an option's value is written is read here, the same for all.

/**
 * Called for each option, a letter (`e` of `-e`, `-ne`) or a long name (`--expression`). `value()` takes the
 * option's value: what its own word holds after it (`-ecode`, `--expression=code`), else the next word, which is then
 * skipped; `attached` is that own-word part alone, for a value that never comes from the next word. For a letter,
 * the answer says whether the rest of its word belongs to it (ending the word) or holds more letters.
 */
export type OptionReader = (option: string, value: () => string | undefined, attached: string | undefined) => boolean;

/** The index of the first operand: options end at `--` (not an operand itself), at `-` and at a word without a dash. */
export function firstOperand(args: readonly string[], read: OptionReader): number {
  let i = 0;
  let attached: string | undefined;
  const value = () => attached ?? args[++i];
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
