// HTML to readable text for web_fetch (docs/tools.md#web): one linear pass over the markup, no DOM and no
// regular expression that can backtrack. Scripts, styles, templates, SVG and the head (except its <title>) are
// dropped; block elements become line breaks, list items `- `, headings `#`, links `text (absolute url)`;
// entities are decoded and whitespace collapsed. It is a reader's view, not a faithful rendering.

export interface HtmlText {
  title: string | null;
  text: string;
}

/** Elements whose content is never shown. */
/** (The head is dropped too, apart from its title, but it may end without an end tag: see `headOpen`.) */
const SKIPPED = new Set(["script", "style", "noscript", "template", "svg", "math", "iframe", "object", "canvas"]);
/** Elements whose content is raw text up to their end tag (no markup inside). */
const RAW_TEXT = new Set(["script", "style", "textarea", "title", "xmp", "noembed", "noframes"]);
/** Elements with no end tag. */
const VOID = new Set([
  "area",
  "base",
  "br",
  "col",
  "embed",
  "hr",
  "img",
  "input",
  "link",
  "meta",
  "param",
  "source",
  "track",
  "wbr",
]);
/** Elements that may appear in <head>; any other start tag ends an unclosed head. */
const HEAD_CONTENT = new Set(["title", "meta", "link", "style", "script", "base", "noscript", "template"]);
/** Elements that end the current line (one break). */
const LINE_BLOCKS = new Set([
  "div",
  "section",
  "article",
  "main",
  "nav",
  "aside",
  "header",
  "footer",
  "address",
  "figure",
  "figcaption",
  "form",
  "fieldset",
  "legend",
  "details",
  "summary",
  "dl",
  "dt",
  "dd",
  "ul",
  "ol",
  "li",
  "tr",
  "table",
  "thead",
  "tbody",
  "tfoot",
  "caption",
  "option",
  "label",
  "center",
  "body",
  "html",
]);
/** Elements set off by a blank line. */
const PARAGRAPH_BLOCKS = new Set(["p", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "hr"]);

const NAMED_ENTITIES: Readonly<Record<string, string>> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: "\u00a0",
  copy: "©",
  reg: "®",
  trade: "™",
  hellip: "…",
  mdash: "—",
  ndash: "–",
  lsquo: "‘",
  rsquo: "’",
  sbquo: "‚",
  ldquo: "“",
  rdquo: "”",
  bdquo: "„",
  laquo: "«",
  raquo: "»",
  lsaquo: "‹",
  rsaquo: "›",
  bull: "•",
  middot: "·",
  deg: "°",
  euro: "€",
  pound: "£",
  yen: "¥",
  cent: "¢",
  sect: "§",
  para: "¶",
  times: "×",
  divide: "÷",
  plusmn: "±",
  minus: "−",
  frac12: "½",
  frac14: "¼",
  frac34: "¾",
  sup2: "²",
  sup3: "³",
  micro: "µ",
  iexcl: "¡",
  iquest: "¿",
  shy: "\u00ad",
  ensp: "\u2002",
  emsp: "\u2003",
  thinsp: "\u2009",
  zwnj: "\u200c",
  zwj: "\u200d",
  larr: "←",
  rarr: "→",
  uarr: "↑",
  darr: "↓",
  harr: "↔",
  le: "≤",
  ge: "≥",
  ne: "≠",
  infin: "∞",
  hearts: "♥",
  dagger: "†",
  prime: "′",
  aacute: "á",
  Aacute: "Á",
  agrave: "à",
  Agrave: "À",
  acirc: "â",
  auml: "ä",
  Auml: "Ä",
  aring: "å",
  Aring: "Å",
  atilde: "ã",
  aelig: "æ",
  AElig: "Æ",
  ccedil: "ç",
  Ccedil: "Ç",
  eacute: "é",
  Eacute: "É",
  egrave: "è",
  Egrave: "È",
  ecirc: "ê",
  euml: "ë",
  iacute: "í",
  igrave: "ì",
  icirc: "î",
  iuml: "ï",
  ntilde: "ñ",
  Ntilde: "Ñ",
  oacute: "ó",
  Oacute: "Ó",
  ograve: "ò",
  ocirc: "ô",
  otilde: "õ",
  ouml: "ö",
  Ouml: "Ö",
  oslash: "ø",
  Oslash: "Ø",
  uacute: "ú",
  Uacute: "Ú",
  ugrave: "ù",
  ucirc: "û",
  uuml: "ü",
  Uuml: "Ü",
  szlig: "ß",
  yuml: "ÿ",
};
/** Entities browsers also accept without the closing semicolon. */
const LEGACY_ENTITIES = new Set(["amp", "lt", "gt", "quot", "nbsp", "copy", "reg"]);
const MAX_ENTITY_NAME = 32;

function isNameChar(code: number): boolean {
  return (
    (code >= 97 && code <= 122) || // a-z
    (code >= 65 && code <= 90) || // A-Z
    (code >= 48 && code <= 57) || // 0-9
    code === 45 || // -
    code === 95 || // _
    code === 58 // :
  );
}

function isAsciiLetter(code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 65 && code <= 90);
}

function isSpace(code: number): boolean {
  return code === 32 || code === 9 || code === 10 || code === 13 || code === 12;
}

function codePointText(code: number): string {
  if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return "\ufffd";
  return String.fromCodePoint(code);
}

/** Decodes named, decimal and hex character references; unknown ones stay as written. */
export function decodeEntities(text: string): string {
  let amp = text.indexOf("&");
  if (amp < 0) return text;
  let out = "";
  let last = 0;
  while (amp >= 0) {
    out += text.slice(last, amp);
    let end = amp + 1;
    let replacement: string | null = null;
    if (text.charCodeAt(end) === 35) {
      // &#123; or &#x7b;
      end++;
      const hex = text.charCodeAt(end) === 120 || text.charCodeAt(end) === 88;
      if (hex) end++;
      const start = end;
      while (end < text.length && end - start < 8) {
        const c = text.charCodeAt(end);
        const digit = (c >= 48 && c <= 57) || (hex && ((c >= 97 && c <= 102) || (c >= 65 && c <= 70)));
        if (!digit) break;
        end++;
      }
      if (end > start) {
        replacement = codePointText(Number.parseInt(text.slice(start, end), hex ? 16 : 10));
        if (text.charCodeAt(end) === 59) end++;
      }
    } else {
      const start = end;
      while (end < text.length && end - start < MAX_ENTITY_NAME) {
        const c = text.charCodeAt(end);
        if (!(isAsciiLetter(c) || (c >= 48 && c <= 57))) break;
        end++;
      }
      const name = text.slice(start, end);
      const known = Object.hasOwn(NAMED_ENTITIES, name) ? NAMED_ENTITIES[name] : undefined;
      if (known !== undefined) {
        if (text.charCodeAt(end) === 59) {
          replacement = known;
          end++;
        } else if (LEGACY_ENTITIES.has(name)) {
          replacement = known;
        }
      }
    }
    if (replacement === null) {
      out += "&";
      last = amp + 1;
    } else {
      out += replacement;
      last = end;
    }
    amp = text.indexOf("&", last);
  }
  return out + text.slice(last);
}

interface Tag {
  name: string;
  end: boolean;
  selfClosing: boolean;
  attrs: Map<string, string>;
  /** Index just past the tag's `>`. */
  next: number;
}

/**
 * Parses the tag starting at `<` (position `at`): null when it is not a tag (then `<` is text), "eof" when the
 * document ends inside it (a browser then drops the rest of the document, and so does this).
 */
function parseTag(html: string, at: number): Tag | null | "eof" {
  let i = at + 1;
  const end = html.charCodeAt(i) === 47; // '/'
  if (end) i++;
  if (!isAsciiLetter(html.charCodeAt(i))) return null;
  const nameStart = i;
  while (i < html.length && isNameChar(html.charCodeAt(i))) i++;
  const name = html.slice(nameStart, i).toLowerCase();
  const attrs = new Map<string, string>();
  let selfClosing = false;
  while (i < html.length) {
    const c = html.charCodeAt(i);
    if (c === 62) return { name, end, selfClosing, attrs, next: i + 1 }; // '>'
    if (isSpace(c)) {
      i++;
      continue;
    }
    if (c === 47) {
      // '/' : self-closing when it ends the tag
      selfClosing = html.charCodeAt(i + 1) === 62;
      i++;
      continue;
    }
    // An attribute name runs to whitespace, '=', '>' or '/'.
    const attrStart = i;
    while (i < html.length) {
      const d = html.charCodeAt(i);
      if (isSpace(d) || d === 61 || d === 62 || d === 47) break;
      i++;
    }
    if (i === attrStart) i++; // a stray character: skip it
    const attrName = html.slice(attrStart, i).toLowerCase();
    while (i < html.length && isSpace(html.charCodeAt(i))) i++;
    let value = "";
    if (html.charCodeAt(i) === 61) {
      i++;
      while (i < html.length && isSpace(html.charCodeAt(i))) i++;
      const quote = html.charCodeAt(i);
      if (quote === 34 || quote === 39) {
        const close = html.indexOf(quote === 34 ? '"' : "'", i + 1);
        if (close < 0) return "eof";
        value = html.slice(i + 1, close);
        i = close + 1;
      } else {
        const valueStart = i;
        while (i < html.length && !isSpace(html.charCodeAt(i)) && html.charCodeAt(i) !== 62) i++;
        value = html.slice(valueStart, i);
      }
    }
    if (attrName.length > 0 && !attrs.has(attrName)) attrs.set(attrName, decodeEntities(value));
  }
  return "eof";
}

/** Index of the end tag `</name` at or after `from` (case-insensitive), or -1. */
function findEndTag(html: string, name: string, from: number): number {
  let at = html.indexOf("</", from);
  while (at >= 0) {
    const candidate = html.slice(at + 2, at + 2 + name.length).toLowerCase();
    if (candidate === name && !isNameChar(html.charCodeAt(at + 2 + name.length))) return at;
    at = html.indexOf("</", at + 2);
  }
  return -1;
}

const SPACE_RUN = /[ \t\n\r\f\u00a0]+/g;

/** Builds the text: words, pending spaces and pending line breaks, so blocks never stack blank lines. */
class TextBuilder {
  readonly parts: string[] = [];
  #breaks = 0;
  #space = false;
  #lineStart = true;
  #empty = true;

  /** Inline text: whitespace collapses to one space. */
  words(text: string): void {
    const collapsed = text.replace(SPACE_RUN, " ");
    if (collapsed.length === 0) return;
    const leading = collapsed.charCodeAt(0) === 32;
    const trailing = collapsed.charCodeAt(collapsed.length - 1) === 32;
    const core = collapsed.trim();
    if (leading) this.#space = true;
    if (core.length > 0) this.raw(core);
    if (trailing && core.length > 0) this.#space = true;
  }

  /** Text as is (after any pending break or space). */
  raw(text: string): void {
    if (text.length === 0) return;
    if (this.#breaks > 0 && !this.#empty) {
      this.parts.push("\n".repeat(this.#breaks));
      this.#lineStart = true;
    } else if (this.#space && !this.#lineStart) {
      this.parts.push(" ");
    }
    this.#breaks = 0;
    this.#space = false;
    this.parts.push(text);
    this.#empty = false;
    this.#lineStart = text.charCodeAt(text.length - 1) === 10;
  }

  /** Preformatted text: kept line for line. */
  pre(text: string): void {
    const normal = text.replace(/\r\n?/g, "\n");
    const lines = normal.split("\n");
    for (let i = 0; i < lines.length; i++) {
      if (i > 0) this.lineBreak(1);
      const line = lines[i]!;
      if (line.length > 0) {
        this.#space = false;
        this.raw(line.replace(/\u00a0/g, " "));
      }
    }
  }

  /** A <br>: always a new line, so two in a row leave a blank line. */
  hardBreak(): void {
    if (!this.#empty) {
      if (this.#breaks > 0) this.parts.push("\n".repeat(this.#breaks));
      this.parts.push("\n");
      this.#lineStart = true;
    }
    this.#breaks = 0;
    this.#space = false;
  }

  /** Ends the line; `count` 2 leaves a blank line. */
  lineBreak(count: 1 | 2): void {
    if (count > this.#breaks) this.#breaks = count;
    this.#space = false;
  }

  space(): void {
    this.#space = true;
  }

  toString(): string {
    const joined = this.parts.join("");
    // Trailing spaces on a line and runs of blank lines go; the content itself never holds more than 2 breaks.
    const lines = joined.split("\n").map((l) => l.trimEnd());
    const out: string[] = [];
    let blank = 0;
    for (const line of lines) {
      if (line.length === 0) {
        blank++;
        if (blank > 1) continue;
      } else blank = 0;
      out.push(line);
    }
    return out.join("\n").trim();
  }
}

/** Whether a link target is worth showing (http, https, mailto), resolved against the page. */
function resolveLink(href: string, base: URL | null): string | null {
  const h = href.trim();
  if (h.length === 0 || h.startsWith("#")) return null;
  try {
    const url = base ? new URL(h, base) : new URL(h);
    if (url.protocol !== "http:" && url.protocol !== "https:" && url.protocol !== "mailto:") return null;
    return url.href;
  } catch {
    return null;
  }
}

/** Converts an HTML document (or fragment) to readable text; `baseUrl` resolves relative links. */
export function htmlToText(html: string, baseUrl?: string | URL): HtmlText {
  let base: URL | null = null;
  if (baseUrl !== undefined) {
    try {
      base = new URL(baseUrl);
    } catch {
      base = null;
    }
  }
  const out = new TextBuilder();
  let title: string | null = null;
  let headOpen = false;
  /** The outermost skipped element (and how deep its own nesting is), or null. */
  let skipping: { name: string; depth: number } | null = null;
  let preDepth = 0;
  const lists: string[] = [];
  let link: { href: string | null; start: number } | null = null;
  let cell = 0;

  const closeLink = () => {
    if (link === null) return;
    const { href } = link;
    const shown = out.parts.slice(link.start).join("").trim();
    if (href !== null && shown.length > 0 && shown !== href) out.raw(` (${href})`);
    else if (href !== null && shown.length === 0) out.raw(href);
    link = null;
  };

  let i = 0;
  let textStart = 0;
  const flushText = (upTo: number) => {
    if (upTo <= textStart) return;
    if (skipping !== null) return;
    const text = decodeEntities(html.slice(textStart, upTo));
    if (headOpen) {
      if (text.trim().length === 0) return;
      headOpen = false; // text in the head means the body started
    }
    if (preDepth > 0) out.pre(text);
    else out.words(text);
  };

  while (i < html.length) {
    const lt = html.indexOf("<", i);
    if (lt < 0) break;
    i = lt;
    // Comments, doctypes and processing instructions.
    if (html.startsWith("<!--", lt)) {
      flushText(lt);
      const close = html.indexOf("-->", lt + 4);
      i = close < 0 ? html.length : close + 3;
      textStart = i;
      continue;
    }
    const second = html.charCodeAt(lt + 1);
    if (second === 33 || second === 63) {
      // <! or <?
      flushText(lt);
      const close = html.indexOf(">", lt + 2);
      i = close < 0 ? html.length : close + 1;
      textStart = i;
      continue;
    }
    const tag = parseTag(html, lt);
    if (tag === null) {
      i = lt + 1; // a literal '<': part of the text
      continue;
    }
    if (tag === "eof") {
      flushText(lt);
      textStart = html.length;
      break;
    }
    flushText(lt);
    i = tag.next;
    textStart = i;
    const { name } = tag;

    if (!tag.end) {
      if (headOpen && !HEAD_CONTENT.has(name)) headOpen = false;
      if (RAW_TEXT.has(name) && !tag.selfClosing) {
        // Raw text runs to the matching end tag; nothing inside is markup.
        const close = findEndTag(html, name, i);
        const contentEnd = close < 0 ? html.length : close;
        const content = html.slice(i, contentEnd);
        const closeGt = close < 0 ? -1 : html.indexOf(">", close);
        i = closeGt < 0 ? html.length : closeGt + 1;
        textStart = i;
        if (name === "title") {
          if (title === null && skipping === null) {
            const t = decodeEntities(content).replace(SPACE_RUN, " ").trim();
            if (t.length > 0) title = t;
          }
        } else if (name === "textarea" && skipping === null && !headOpen) {
          out.words(decodeEntities(content));
        }
        continue;
      }
      if (skipping !== null) {
        if (name === skipping.name && !tag.selfClosing && !VOID.has(name)) skipping.depth++;
        continue;
      }
      if (name === "head") {
        headOpen = true;
        continue;
      }
      if (SKIPPED.has(name) && !tag.selfClosing) {
        skipping = { name, depth: 1 };
        continue;
      }
      if (name === "br") {
        out.hardBreak();
        continue;
      }
      if (name === "a") {
        closeLink();
        const href = tag.attrs.get("href");
        link = { href: href === undefined ? null : resolveLink(href, base), start: out.parts.length };
        continue;
      }
      if (name === "img") {
        const alt = tag.attrs.get("alt")?.replace(SPACE_RUN, " ").trim();
        if (alt) out.words(` ${alt} `);
        continue;
      }
      if (name === "ul" || name === "ol") {
        out.lineBreak(1);
        lists.push(name);
        continue;
      }
      if (name === "li") {
        out.lineBreak(1);
        out.raw(`${"  ".repeat(Math.max(0, lists.length - 1))}-`);
        out.space();
        continue;
      }
      if (name === "tr") {
        out.lineBreak(1);
        cell = 0;
        continue;
      }
      if (name === "td" || name === "th") {
        if (cell > 0) out.raw(" | ");
        cell++;
        continue;
      }
      if (name === "pre" && !tag.selfClosing) preDepth++;
      if (/^h[1-6]$/.test(name)) {
        out.lineBreak(2);
        out.raw("#".repeat(Number(name[1])));
        out.space();
        continue;
      }
      if (PARAGRAPH_BLOCKS.has(name)) out.lineBreak(2);
      else if (LINE_BLOCKS.has(name)) out.lineBreak(1);
      continue;
    }

    // End tags.
    if (skipping !== null) {
      if (name === skipping.name) {
        skipping.depth--;
        if (skipping.depth === 0) skipping = null;
      }
      continue;
    }
    if (name === "head") {
      headOpen = false;
      continue;
    }
    if (name === "a") {
      closeLink();
      continue;
    }
    if (name === "ul" || name === "ol") {
      lists.pop();
      out.lineBreak(1);
      continue;
    }
    if (name === "pre" && preDepth > 0) preDepth--;
    if (PARAGRAPH_BLOCKS.has(name) || /^h[1-6]$/.test(name)) out.lineBreak(2);
    else if (LINE_BLOCKS.has(name)) out.lineBreak(1);
  }
  flushText(html.length);
  closeLink();
  return { title, text: out.toString() };
}
