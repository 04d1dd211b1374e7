import { isDeepStrictEqual } from "node:util";
import { parseDocument } from "yaml";

// yaml's Document API keeps comments but re-renders the whole file: aligned comments lose their padding, runs of
// blank lines shrink to one, flow lists get yaml's own spacing. This module carries the user's own lines over to
// the re-rendered text wherever a line only differs in whitespace, then re-parses the result and falls back to the
// plain rendering unless both mean exactly the same data. Correctness comes from that check, not the heuristics.

export interface IndentStyle {
  indent: number;
  indentSeq: boolean;
}

/** The indentation the file already uses, so re-rendered lines line up with the user's. */
export function detectIndent(text: string): IndentStyle {
  const lines = text.split(/\r?\n/).filter((line) => line.trim() !== "" && !line.trimStart().startsWith("#"));
  let indent = 0;
  let indentSeq = true;
  let seqSeen = false;
  for (let i = 1; i < lines.length; i++) {
    const prev = lines[i - 1]!;
    const line = lines[i]!;
    if (!/:\s*(#.*)?$/.test(prev)) continue; // only lines that open a block under a key
    const step = leading(line).length - leading(prev).length;
    const isSeq = line.trimStart().startsWith("- ") || line.trim() === "-";
    if (isSeq && !seqSeen) {
      seqSeen = true;
      indentSeq = step > 0;
    }
    if (!isSeq && step > 0 && indent === 0) indent = step;
  }
  return { indent: indent >= 1 && indent <= 8 ? indent : 2, indentSeq };
}

function leading(line: string): string {
  return /^[ \t]*/.exec(line)![0];
}

// Same indentation and same non-space characters: the line can only differ in spacing.
function normalize(line: string): string {
  return leading(line) + line.replace(/\s+/g, "");
}

const LOOKAHEAD = 200;

/** The rendered text with each line replaced by the user's original line where they only differ in spacing. */
export function keepOriginalLines(original: string, rendered: string): string {
  const eol = original.includes("\r\n") ? "\r\n" : "\n";
  const old = original.split(/\r?\n/);
  const next = rendered.split("\n");
  const out: string[] = [];
  let cursor = 0;
  // yaml indents a list whose key line carries a comment even when the user's lists are not indented; within
  // such a block, rendered lines are shifted back by `shift` before they are compared and written.
  let shift = 0;
  let shiftAbove = 0;
  for (let i = 0; i < next.length; i++) {
    let line = next[i]!;
    if (line.trim() === "") {
      // A blank line only pairs with a blank line right here; searching ahead would skip real lines.
      if (old[cursor] !== undefined && old[cursor]!.trim() === "") out.push(old[cursor++]!);
      else out.push(line);
      continue;
    }
    if (shift > 0) {
      if (leading(line).length > shiftAbove && leading(line).length >= shift) line = line.slice(shift);
      else shift = 0;
    }
    let found = findAhead(old, cursor, normalize(line));
    // yaml moves `key: # comment` to a comment line below the key; put it back when the user wrote it that way.
    const below = next[i + 1]?.trim() ?? "";
    if (found < 0 && line.endsWith(":") && below.startsWith("#")) {
      found = findAhead(old, cursor, normalize(`${line} ${below}`));
      if (found >= 0) {
        i++;
        const child = next.slice(i + 1).find((l) => l.trim() !== "");
        const oldChild = old.slice(found + 1).find((l) => l.trim() !== "");
        if (child !== undefined && oldChild?.trimStart().startsWith("-")) {
          shiftAbove = leading(line).length;
          shift = Math.max(0, leading(child).length - leading(oldChild).length);
        }
      }
    }
    if (found < 0) {
      // An edited line: keep its trailing comment in the user's column when the next original line is its old self.
      const realigned = old[cursor] === undefined ? undefined : realignComment(line, old[cursor]!);
      if (realigned !== undefined) cursor++;
      out.push(realigned ?? line);
      continue;
    }
    // Blank lines yaml folded away come back; anything else skipped was removed by the edit.
    const skipped = old.slice(cursor, found);
    if (skipped.length > 0 && skipped.every((l) => l.trim() === "")) out.push(...skipped);
    out.push(old[found]!);
    cursor = found + 1;
  }
  return out.join(eol);
}

const TRAILING_COMMENT = /^(.*?\S)(\s+)(#.*)$/;

function realignComment(line: string, old: string): string | undefined {
  const now = TRAILING_COMMENT.exec(line);
  const was = TRAILING_COMMENT.exec(old);
  if (!now || !was || now[3] !== was[3] || leading(line) !== leading(old)) return undefined;
  if (now[1]!.split(":")[0] !== was[1]!.split(":")[0]) return undefined; // a different key
  if (was[2] === " ") return line; // not aligned: nothing to keep
  const column = was[1]!.length + was[2]!.length;
  return now[1] + " ".repeat(Math.max(1, column - now[1]!.length)) + now[3];
}

function findAhead(old: string[], cursor: number, key: string): number {
  for (let j = cursor; j < Math.min(old.length, cursor + LOOKAHEAD); j++) if (normalize(old[j]!) === key) return j;
  return -1;
}

/** `keepOriginalLines`, used only when the result parses to exactly the data of the rendered text. */
export function preserveFormatting(original: string, rendered: string): string {
  if (original === "") return rendered;
  const merged = keepOriginalLines(original, rendered);
  if (merged === rendered) return rendered;
  const want = parseDocument(rendered);
  const got = parseDocument(merged);
  if (got.errors.length > 0 || !isDeepStrictEqual(got.toJS(), want.toJS())) return rendered;
  return merged;
}
