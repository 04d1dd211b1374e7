// Reads a shell's inline program (`sh -c '...'`) for the launcher rule (launchers.ts): which commands it would
// run, found without running or expanding anything. Quoting and escapes are removed (`r''m`, `r\m` and `"rm"` are
// all `rm`); command substitutions, backquotes, process substitutions, here-documents and `$((...))` are read as
// code too; whatever only the running shell knows (an expansion, a glob, a brace list) is marked DYNAMIC, so the
// caller can refuse a command whose name cannot be checked. Anything the reader does not understand is a
// ShellCodeError, which the caller refuses as well: a program it cannot read is a program it cannot check.

/** Marks a part of a word that only the running shell knows: an expansion, a substitution, a glob, a brace list. */
export const DYNAMIC = "\0";

export type ShellDialect = "posix" | "fish";

export interface ShellScan {
  /** Every simple command of the program and of the code inside it, as its words after quote removal. */
  commands: string[][];
  /**
   * Text in parentheses glued to a word (zsh glob qualifiers such as `*(e:'...':)`, extglob):
   * it may run code in ways not modelled here, so the caller also looks for blocked names in it.
   */
  opaque: string[];
}

export class ShellCodeError extends Error {
  override name = "ShellCodeError";
}

type Token = { op: string } | { word: string; raw: string; funcDef: boolean };

/** Longest first, so `;;&` wins over `;;` and `;`. */
const OPERATORS = [
  ";;&",
  "&>>",
  "<<<",
  "<<-",
  ";;",
  ";&",
  "&&",
  "||",
  "|&",
  "&>",
  ">>",
  ">|",
  ">&",
  "<<",
  "<>",
  "<&",
  ";",
  "&",
  "|",
  "(",
  ")",
  "<",
  ">",
];
const OPERATOR_START = new Set([";", "&", "|", "(", ")", "<", ">"]);
/** Operators whose next word is a file or descriptor, never a command. */
const REDIRECTS = new Set(["<<<", "&>>", "&>", ">>", ">|", ">&", "<>", "<&", "<", ">"]);
const CASE_END = new Set([";;", ";&", ";;&"]);
/** Reserved words (POSIX shells and fish) after which the next word is again in command position. */
const PREFIX_KEYWORDS = new Set([
  "!",
  "{",
  "}",
  "if",
  "then",
  "else",
  "elif",
  "fi",
  "while",
  "until",
  "do",
  "done",
  "coproc",
  "and",
  "or",
  "not",
  "begin",
  "end",
]);
/** Words that are not commands: a `[[ ]]` test, a for/select/function header, a function name, a case subject. */
type Skip = "test" | "header" | "name" | "subject";
/** The reserved words after which a skip starts. */
const POSIX_SKIPS = new Map<string, Skip>([
  ["[[", "test"],
  ["for", "header"],
  ["select", "header"],
  ["function", "name"],
  ["case", "subject"],
]);
const FISH_SKIPS = new Map<string, Skip>([
  ["for", "header"],
  ["select", "header"],
  ["switch", "header"],
  ["case", "header"],
  ["function", "header"],
]);
/** The bare word that ends a skip; a `name` skip is one word, and an operator ends a header or a name too. */
const SKIP_END: Record<Exclude<Skip, "name">, string> = { test: "]]", header: "do", subject: "in" };
/** Words with glob characters that are the shell's own syntax, not patterns. */
const PUNCTUATION = new Set(["[", "[[", "{", "}"]);
const ARRAY_ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=$/;
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;
const IO_NUMBER = /^(\d+|\{[A-Za-z_][A-Za-z0-9_]*\})[<>]/;
const PARAMETER = /[A-Za-z0-9_@*#?$!-]/;
/** Substitutions nest; past this the program is refused rather than read on. */
const MAX_DEPTH = 24;

/** The commands `code` would run, or the reason it cannot be read. */
export function scanShell(code: string, dialect: ShellDialect): ShellScan | { error: string } {
  const scan: ShellScan = { commands: [], opaque: [] };
  try {
    new ShellReader(code, dialect === "fish", scan, 0).program();
    return scan;
  } catch (error) {
    if (error instanceof ShellCodeError) return { error: error.message };
    throw error;
  }
}

class ShellReader {
  readonly #src: string;
  readonly #fish: boolean;
  readonly #scan: ShellScan;
  #depth: number;
  #pos = 0;
  readonly #heredocs: Array<{ delimiter: string; strip: boolean; literal: boolean }> = [];

  constructor(src: string, fish: boolean, scan: ShellScan, depth: number) {
    if (depth > MAX_DEPTH) throw new ShellCodeError("code nested too deeply");
    this.#src = src;
    this.#fish = fish;
    this.#scan = scan;
    this.#depth = depth;
  }

  program(): void {
    this.#list(false);
  }

  /** Code read from another text (backquotes, here-documents, quoted text that looks like code). */
  #inner(text: string): ShellReader {
    return new ShellReader(text, this.#fish, this.#scan, this.#depth + 1);
  }

  /** Reads commands to the end, or when `nested` up to and including the `)` that closes a substitution. */
  #list(nested: boolean): void {
    if (++this.#depth > MAX_DEPTH) throw new ShellCodeError("code nested too deeply");
    try {
      this.#commands(nested);
    } finally {
      this.#depth--;
    }
  }

  #commands(nested: boolean): void {
    let command: string[] | null = null;
    let redirect = false;
    let skip: Skip | null = null;
    const cases: Array<"pattern" | "body"> = [];
    let parens = 0;
    const end = () => {
      if (command) this.#scan.commands.push(command);
      command = null;
      redirect = false;
      if (skip === "header" || skip === "name") skip = null;
    };
    for (;;) {
      const token = this.#next();
      if (token === null) {
        if (nested) throw new ShellCodeError("unterminated $(");
        end();
        return;
      }
      const top = cases.at(-1);
      if ("op" in token) {
        const op = token.op;
        if (skip === "test" || skip === "subject") continue;
        if (top === "pattern") {
          if (op === ")") cases[cases.length - 1] = "body";
          continue; // `(`, `|` and newlines belong to the pattern list
        }
        if (REDIRECTS.has(op)) {
          redirect = true;
          continue;
        }
        if (op === "<<") continue; // the here-document's delimiter was read with it
        end();
        if (CASE_END.has(op)) {
          if (top === "body") cases[cases.length - 1] = "pattern";
        } else if (op === "(") {
          parens++;
        } else if (op === ")") {
          if (parens > 0) parens--;
          else if (nested) return;
          else throw new ShellCodeError("unmatched )");
        }
        continue;
      }
      const { word, raw } = token;
      const bare = raw === word; // only an unquoted word is a reserved word
      if (redirect) {
        redirect = false;
        continue;
      }
      if (skip !== null) {
        if (skip === "name" || (bare && word === SKIP_END[skip])) {
          if (skip === "subject") cases.push("pattern");
          skip = null;
        }
        continue;
      }
      if (top === "pattern") {
        if (bare && word === "esac") cases.pop();
        continue;
      }
      if (command) {
        command.push(word);
        continue;
      }
      if (token.funcDef || ASSIGNMENT.test(word)) continue;
      if (bare) {
        if (PREFIX_KEYWORDS.has(word)) continue;
        if (word === "esac" && top === "body") {
          cases.pop();
          continue;
        }
        const opens = (this.#fish ? FISH_SKIPS : POSIX_SKIPS).get(word);
        if (opens !== undefined) {
          skip = opens;
          continue;
        }
      }
      command = [word];
    }
  }

  #next(): Token | null {
    const src = this.#src;
    for (;;) {
      if (this.#pos >= src.length) return null;
      const c = src[this.#pos]!;
      if (c === " " || c === "\t" || c === "\r") {
        this.#pos++;
      } else if (c === "\\" && src[this.#pos + 1] === "\n") {
        this.#pos += 2;
      } else if (c === "#") {
        const newline = src.indexOf("\n", this.#pos);
        this.#pos = newline < 0 ? src.length : newline;
      } else if (c === "\n") {
        this.#pos++;
        this.#readHeredocs();
        return { op: "\n" };
      } else if (c === "{" || (c >= "0" && c <= "9")) {
        // `2>` or `{fd}>`: the descriptor belongs to the redirection, it is not a word
        const io = IO_NUMBER.exec(src.slice(this.#pos, this.#pos + 64));
        if (io === null) return this.#word();
        this.#pos += io[1]!.length;
      } else if (
        OPERATOR_START.has(c) &&
        !((c === "<" || c === ">") && src[this.#pos + 1] === "(") &&
        !(c === "(" && this.#fish)
      ) {
        const op = OPERATORS.find((o) => src.startsWith(o, this.#pos))!;
        this.#pos += op.length;
        if (op === "<<" || op === "<<-") {
          this.#heredoc(op === "<<-");
          return { op: "<<" };
        }
        return { op };
      } else {
        return this.#word();
      }
    }
  }

  #word(): Token {
    const src = this.#src;
    const start = this.#pos;
    let text = "";
    let pattern = false; // a glob, a brace list or zsh's `=cmd`: the word is only known when it runs
    let funcDef = false;
    while (this.#pos < src.length) {
      const c = src[this.#pos]!;
      if (c === " " || c === "\t" || c === "\n" || c === "\r") break;
      if (c === "<" || c === ">") {
        if (src[this.#pos + 1] !== "(") break;
        this.#pos += 2; // process substitution: code
        this.#list(true);
        text += DYNAMIC;
      } else if (c === ";" || c === "&" || c === "|" || c === ")") {
        break;
      } else if (c === "(" && this.#fish) {
        this.#pos++; // fish has no subshells: `(cmd)` is a command substitution, even as a command's name
        this.#list(true);
        text += DYNAMIC;
      } else if (c === "(") {
        funcDef ||= src[this.#pos + 1] === ")"; // `f()`
        text += this.#glued(text);
      } else if (c === "'") {
        text += this.#single();
      } else if (c === '"') {
        text += this.#double();
      } else if (c === "\\") {
        const next = src[this.#pos + 1];
        if (next === undefined) {
          text += "\\";
          this.#pos++;
        } else {
          if (next !== "\n") text += next;
          this.#pos += 2;
        }
      } else if (c === "$") {
        text += this.#dollar(false);
      } else if (c === "`") {
        this.#backquote();
        text += DYNAMIC;
      } else {
        if (c === "*" || c === "?" || c === "[" || c === "{" || c === "}" || (c === "=" && this.#pos === start)) {
          pattern = true;
        }
        text += c;
        this.#pos++;
      }
    }
    const raw = src.slice(start, this.#pos);
    if (pattern && !PUNCTUATION.has(raw)) text += DYNAMIC;
    // Text that reached the word through quoting but reads as code (`x='a[$(rm y)]'` then `$((x))`, which bash
    // evaluates): checked as code too.
    if (text !== raw && (text.includes("$(") || text.includes("`"))) this.#inner(text).program();
    return { word: text, raw, funcDef };
  }

  /** A `(` inside a word: `f()`, an array `a=(...)`, or a glued group read as code and kept for a name scan. */
  #glued(before: string): string {
    const src = this.#src;
    if (src[this.#pos + 1] === ")") {
      this.#pos += 2;
      return "()";
    }
    this.#pos++;
    if (ARRAY_ASSIGNMENT.test(before)) {
      for (;;) {
        const token = this.#next();
        if (token === null) throw new ShellCodeError("unterminated (");
        if ("op" in token && token.op === ")") return DYNAMIC;
      }
    }
    const open = this.#pos;
    this.#list(true);
    this.#scan.opaque.push(src.slice(open, this.#pos - 1));
    return DYNAMIC;
  }

  #single(): string {
    const src = this.#src;
    if (!this.#fish) {
      const close = src.indexOf("'", this.#pos + 1);
      if (close < 0) throw new ShellCodeError("unterminated single quote");
      const text = src.slice(this.#pos + 1, close);
      this.#pos = close + 1;
      return text;
    }
    // fish: `\'` and `\\` are escapes inside single quotes
    let text = "";
    for (this.#pos++; ; ) {
      const c = src[this.#pos];
      if (c === undefined) throw new ShellCodeError("unterminated single quote");
      this.#pos++;
      if (c === "'") return text;
      if (c === "\\" && (src[this.#pos] === "'" || src[this.#pos] === "\\")) text += src[this.#pos++];
      else text += c;
    }
  }

  #double(): string {
    const src = this.#src;
    let text = "";
    this.#pos++;
    for (;;) {
      const c = src[this.#pos];
      if (c === undefined) throw new ShellCodeError("unterminated double quote");
      if (c === '"') {
        this.#pos++;
        return text;
      }
      if (c === "\\") {
        const next = src[this.#pos + 1];
        if (next === undefined) throw new ShellCodeError("unterminated double quote");
        if ('$`"\\\n'.includes(next)) {
          if (next !== "\n") text += next;
          this.#pos += 2;
        } else {
          text += c;
          this.#pos++;
        }
      } else if (c === "$") {
        text += this.#dollar(true);
      } else if (c === "`" && !this.#fish) {
        this.#backquote();
        text += DYNAMIC;
      } else {
        text += c;
        this.#pos++;
      }
    }
  }

  /** At a `$`: an expansion or substitution (DYNAMIC), or a plain `$`. */
  #dollar(quoted: boolean): string {
    const src = this.#src;
    const next = src[this.#pos + 1];
    if (next === "(") {
      if (src[this.#pos + 2] === "(") {
        this.#pos += 3;
        this.#arithmetic();
      } else {
        this.#pos += 2;
        this.#list(true);
      }
      return DYNAMIC;
    }
    if (next === "{") {
      this.#pos += 2;
      this.#braced(quoted);
      return DYNAMIC;
    }
    if (!quoted && next === "'") {
      this.#pos++;
      this.#ansiC();
      return DYNAMIC;
    }
    if (!quoted && next === '"') {
      this.#pos++;
      this.#double();
      return DYNAMIC;
    }
    if (next !== undefined && PARAMETER.test(next)) {
      this.#pos += 2;
      if (/[A-Za-z_]/.test(next)) while (/[A-Za-z0-9_]/.test(src[this.#pos] ?? "")) this.#pos++;
      return DYNAMIC;
    }
    this.#pos++;
    return "$";
  }

  /** `$((...))`: no commands, but substitutions inside run. An unbalanced one is refused, not guessed. */
  #arithmetic(): void {
    const src = this.#src;
    let open = 0;
    for (;;) {
      const c = src[this.#pos];
      if (c === undefined) throw new ShellCodeError("unterminated $((");
      if (c === "(") {
        open++;
        this.#pos++;
      } else if (c === ")") {
        if (open > 0) {
          open--;
          this.#pos++;
        } else if (src[this.#pos + 1] === ")") {
          this.#pos += 2;
          return;
        } else {
          throw new ShellCodeError("unbalanced $((");
        }
      } else {
        this.#expandableStep(c);
      }
    }
  }

  /** `${...}`; inside double quotes a single quote is an ordinary character there. */
  #braced(quoted: boolean): void {
    const src = this.#src;
    let open = 0;
    for (;;) {
      const c = src[this.#pos];
      if (c === undefined) throw new ShellCodeError("unterminated ${");
      if (c === "}") {
        this.#pos++;
        if (open-- === 0) return;
      } else if (c === "{") {
        open++;
        this.#pos++;
      } else if (c === "'" && !quoted) {
        this.#single();
      } else if (c === '"') {
        this.#double();
      } else {
        this.#expandableStep(c);
      }
    }
  }

  /** `$'...'`, where a backslash escapes the quote. */
  #ansiC(): void {
    const src = this.#src;
    for (this.#pos++; ; ) {
      const c = src[this.#pos];
      if (c === undefined) throw new ShellCodeError("unterminated $'");
      this.#pos += c === "\\" ? 2 : 1;
      if (c === "'") return;
    }
  }

  #backquote(): void {
    const src = this.#src;
    let inner = "";
    for (this.#pos++; ; ) {
      const c = src[this.#pos];
      if (c === undefined) throw new ShellCodeError("unterminated backquote");
      if (c === "`") {
        this.#pos++;
        break;
      }
      const next = src[this.#pos + 1];
      if (c === "\\" && next !== undefined && "$`\\".includes(next)) {
        inner += next;
        this.#pos += 2;
      } else {
        inner += c;
        this.#pos++;
      }
    }
    this.#inner(inner).program();
  }

  /** After `<<`: the delimiter; the body is read at the next newline. */
  #heredoc(strip: boolean): void {
    const src = this.#src;
    while (src[this.#pos] === " " || src[this.#pos] === "\t") this.#pos++;
    const start = this.#pos;
    while (this.#pos < src.length && !/[\s;&|()<>]/.test(src[this.#pos]!)) {
      const c = src[this.#pos]!;
      if (c === "'" || c === '"') {
        const close = src.indexOf(c, this.#pos + 1);
        if (close < 0) throw new ShellCodeError("unterminated here-document delimiter");
        this.#pos = close + 1;
      } else {
        this.#pos += c === "\\" ? 2 : 1;
      }
    }
    const raw = src.slice(start, this.#pos);
    if (raw.length === 0) throw new ShellCodeError("here-document without a delimiter");
    this.#heredocs.push({ delimiter: raw.replace(/["'\\]/g, ""), strip, literal: /["'\\]/.test(raw) });
  }

  /** Here-document bodies: an unquoted delimiter means substitutions in the body run. */
  #readHeredocs(): void {
    const src = this.#src;
    for (const doc of this.#heredocs.splice(0)) {
      let body = "";
      while (this.#pos < src.length) {
        const newline = src.indexOf("\n", this.#pos);
        const lineEnd = newline < 0 ? src.length : newline;
        const line = src.slice(this.#pos, lineEnd);
        this.#pos = newline < 0 ? src.length : newline + 1;
        if ((doc.strip ? line.replace(/^\t+/, "") : line) === doc.delimiter) break;
        body += `${line}\n`;
      }
      if (!doc.literal) this.#inner(body).#expandable();
      else if (body.includes("$(") || body.includes("`")) this.#inner(body).program();
    }
  }

  /** Text where only `$` and backquotes are special (a here-document body). */
  #expandable(): void {
    const src = this.#src;
    while (this.#pos < src.length) this.#expandableStep(src[this.#pos]!);
  }

  /** One step through such text, `$((...))` or `${...}` at `c`: an expansion, a backquote, a character or an escape. */
  #expandableStep(c: string): void {
    if (c === "$") this.#dollar(true);
    else if (c === "`") this.#backquote();
    else this.#pos += c === "\\" ? 2 : 1;
  }
}
