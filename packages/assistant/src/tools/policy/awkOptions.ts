import { longOption, type ScriptOptionReader, type ScriptOptions } from "./options.ts";
import { DYNAMIC } from "./shellCode.ts";

// How each awk reads its options, which decides which word is its program: the same words give different programs.
// gawk (and busybox awk) read options the getopt way: letters grouped in one word (`-bv x=1` is `-b -v x=1`), long
// options by any unambiguous prefix (`--so=code` is `--source=code`), `-W name` as `--name`. BWK awk (macOS,
// original-awk), mawk and goawk read one option a word, the rest of the word being its value, and BWK awk ignores
// what it does not know (`-bv 'code'` runs the code). `awk` and `nawk` may be any of them, so inlineCode.ts checks
// the program under every reading they may have.

/** gawk's long options and the short option each is (its getopt_long table, gawk 5.3; "" for none). */
const GAWK_LONG = new Map([
  ["assign", "v"],
  ["bignum", "M"],
  ["characters-as-bytes", "b"],
  ["copyright", "C"],
  ["csv", "k"],
  ["debug", "D"],
  ["dump-variables", "d"],
  ["exec", "E"],
  ["field-separator", "F"],
  ["file", "f"],
  ["gen-pot", "g"],
  ["help", "h"],
  ["include", "i"],
  ["lint", "L"],
  ["lint-old", "t"],
  ["load", "l"],
  ["no-optimize", "s"],
  ["non-decimal-data", "n"],
  ["nostalgia", ""],
  ["optimize", "O"],
  ["posix", "P"],
  ["pretty-print", "o"],
  ["profile", "p"],
  ["re-interval", "r"],
  ["sandbox", "S"],
  ["source", "e"],
  ["trace", "I"],
  ["traditional", "c"],
  ["use-lc-numeric", "N"],
  ["version", "V"],
]);
const GAWK_LONG_NAMES = [...GAWK_LONG.keys()];
/** gawk's letters taking a value: the rest of the word, else the next word (`Z`: `-Z locale` in some builds). */
const GAWK_VALUE = new Set("eEfFilvWZ");
/** gawk's letters whose value can only be the rest of their word (`-dvars.out`): `-d x` leaves `x` alone. */
const GAWK_OPTIONAL = new Set("dDLop");
/** Every letter gawk knows (its getopt string `F:f:v:W;bcCd::D::e:E:ghi:Ikl:L::nNo::Op::MPrSstVYZ:`). */
const GAWK_LETTERS = new Set("FfvWbcCdDeEghiIklLnNoOpMPrSstVYZ");

/**
 * gawk: letters per getopt; `-W name[=value]` is the long option `--name[=value]` (getopt's `W;`). An option gawk
 * does not know (a letter, a long name, or one abbreviating several) ends its options with an error, and so does
 * `-E`: a `--sandbox` after them is never read, so it no longer counts here. What follows is read on all the same,
 * which only finds more.
 */
function gawk(): ScriptOptionReader {
  let ended = false;
  const option = (found: ScriptOptions, given: string, value: () => string | undefined): boolean => {
    // the letter it is, or `?` (as getopt answers) for one gawk does not know
    const letter = given.startsWith("--")
      ? (GAWK_LONG.get(longOption(given, GAWK_LONG_NAMES) ?? "") ?? "?")
      : GAWK_LETTERS.has(given)
        ? given
        : "?";
    if (letter === "?" || letter === "E") ended = true;
    if (letter === "e") found.code.push(value() ?? DYNAMIC);
    else if (letter === "S" && !ended) found.sandbox = true;
    else if (GAWK_VALUE.has(letter)) value();
    if (letter === "f" || letter === "E") found.file = true;
    return GAWK_VALUE.has(letter) || GAWK_OPTIONAL.has(letter);
  };
  return (found, given, value) => {
    if (given !== "W") return option(found, given, value);
    const word = value();
    if (word !== undefined) {
      const eq = word.indexOf("=");
      option(found, `--${eq < 0 ? word : word.slice(0, eq)}`, eq < 0 ? value : () => word.slice(eq + 1));
    }
    return true;
  };
}

/**
 * An awk reading one option a word: the letters in `values` take the rest of the word, else the next word; any
 * other letter has the rest of its word, or is ignored. `words` are goawk's long words taking the next word
 * (`-cpuprofile file`). Long options (`--csv`, `--version`) take no value.
 */
function oneLetter(values: string, words: ReadonlySet<string> = new Set()): () => ScriptOptionReader {
  const taking = new Set(values);
  return () => (found, option, value, attached) => {
    if (taking.has(option)) {
      value();
      if (option === "f" || option === "E") found.file = true;
    } else if (words.has(option + (attached ?? ""))) {
      value(); // the rest of the word: the option's name
      value();
    }
    return true;
  };
}

/** BWK awk (the one true awk): `-f`, `-F`, `-v`; anything else is ignored, `-safe` included (read as not safe). */
const bwk = oneLetter("fFv");
/** mawk: `-f`, `-F`, `-v` and `-W option`; its `-W sandbox` does nothing, so only gawk's reading sees a sandbox. */
const mawk = oneLetter("fFvW");
/** goawk: `-E`, `-i`, `-o` take a value too. */
const goawk = oneLetter("fFvEio", new Set(["covermode", "coverprofile", "cpuprofile", "memprofile"]));

const ANY_AWK = [gawk, mawk, bwk, goawk];

/** How each awk reads its options, by its name (`awk` and `nawk` may be any of them): a new reader for each command. */
export const AWK_READINGS: ReadonlyMap<string, ReadonlyArray<() => ScriptOptionReader>> = new Map([
  ["awk", ANY_AWK],
  ["nawk", ANY_AWK],
  ["gawk", [gawk]],
  ["mawk", [mawk]],
  ["original-awk", [bwk]],
  ["goawk", [goawk]],
]);
