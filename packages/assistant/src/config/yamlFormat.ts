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

/**
 * The rendered text with each line replaced by the user's original line where they only differ in spacing.
 * Indentation follows the user's: a rendered line is expected at its own indentation shifted like the closest line
 * above it at the same or a lower level, and a list item may also sit at its parent key's indentation (lists not
 * indented under their key, which yaml cannot render for every indent width). New lines follow the same rules.
 */
export function keepOriginalLines(original: string, rendered: string, style = detectIndent(original)): string {
  const eol = original.includes("\r\n") ? "\r\n" : "\n";
  const old = original.split(/\r?\n/);
  const oldKeys = old.map(normalize);
  const next = rendered.split("\n");
  const out: string[] = [];
  const placed: { rendered: number; at: number }[] = [];
  const shiftFor = (indent: number) => {
    for (let k = placed.length - 1; k >= 0; k--)
      if (placed[k]!.rendered <= indent) return placed[k]!.at - placed[k]!.rendered;
    return 0;
  };
  const parentAt = (indent: number) => {
    for (let k = placed.length - 1; k >= 0; k--) if (placed[k]!.rendered < indent) return placed[k]!.at;
    return 0;
  };
  let cursor = 0;
  for (let i = 0; i < next.length; i++) {
    const line = next[i]!;
    if (line.trim() === "") {
      // A blank line only pairs with a blank line right here; searching ahead would skip real lines.
      if (old[cursor] !== undefined && old[cursor]!.trim() === "") out.push(old[cursor++]!);
      else out.push(line);
      continue;
    }
    const indent = leading(line).length;
    const body = line.slice(indent);
    const candidates = [indent + shiftFor(indent)];
    // A list item the user would not indent under its key (style.indentSeq false) goes to the key's column first.
    if (body.startsWith("-"))
      style.indentSeq ? candidates.push(parentAt(indent)) : candidates.unshift(parentAt(indent));
    // yaml moves `key: # comment` to a comment line below the key; put it back when the user wrote it that way.
    const below = next[i + 1]?.trim() ?? "";
    const forms = body.endsWith(":") && below.startsWith("#") ? [body, `${body} ${below}`] : [body];
    let found = -1;
    let at = candidates[0]!;
    search: for (const form of forms) {
      for (const column of candidates) {
        found = findAhead(oldKeys, cursor, normalize(" ".repeat(column) + form));
        if (found >= 0) {
          at = column;
          if (form !== body) i++;
          break search;
        }
      }
    }
    placed.push({ rendered: indent, at });
    if (found < 0) {
      // An edited line: keep its trailing comment in the user's column when the next original line is its old self.
      const moved = " ".repeat(at) + body;
      const realigned = old[cursor] === undefined ? undefined : realignComment(moved, old[cursor]!);
      if (realigned !== undefined) cursor++;
      out.push(realigned ?? moved);
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

function findAhead(oldKeys: string[], cursor: number, key: string): number {
  const end = Math.min(oldKeys.length, cursor + LOOKAHEAD);
  for (let j = cursor; j < end; j++) if (oldKeys[j] === key) return j;
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
