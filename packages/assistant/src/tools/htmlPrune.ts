import { Parser } from "htmlparser2";

// The first pass of the HTML reader (html.ts): one streaming htmlparser2 pass that writes the page back as HTML
// without what is never read (scripts except JSON-LD metadata, styles, comments, SVG, frames...) and within
// bounds, so the DOM, the reader view and the markdown writer after it stay fast on any page: nesting deeper than
// a browser's parser keeps (Chrome stops at 512) is flattened, and elements and text past a budget are left out.
// A fragment gets the html and body elements a browser would add. `nestingDepth` screens out pages too deep for
// htmlparser2 itself.

/** Elements whose content is never shown. */
const DROPPED = new Set(["script", "style", "noscript", "template", "svg", "math", "iframe", "object", "canvas"]);
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
const ATTRIBUTE_NAME = /^[a-z_:][-a-z0-9_:.]*$/;
/** Elements whose end tag may be left out (a parser closes them itself), and void elements: not nesting. */
const SELF_ENDING = new Set([
  ...VOID,
  "html",
  "head",
  "body",
  "p",
  "li",
  "dt",
  "dd",
  "rt",
  "rp",
  "optgroup",
  "option",
  "colgroup",
  "caption",
  "thead",
  "tbody",
  "tfoot",
  "tr",
  "td",
  "th",
]);
const TAG = /<(\/?)([a-zA-Z][a-zA-Z0-9-]*)/g;

/**
 * How deep the page nests elements that need an end tag, read from its tags alone in one pass. htmlparser2 (and so
 * linkedom) slows down quadratically with depth: a page nested thousands deep is not parsed at all.
 */
export function nestingDepth(html: string): number {
  let depth = 0;
  let deepest = 0;
  for (const [, end, name] of html.matchAll(TAG)) {
    if (SELF_ENDING.has(name!.toLowerCase())) continue;
    depth = end ? Math.max(0, depth - 1) : depth + 1;
    if (depth > deepest) deepest = depth;
  }
  return deepest;
}

export interface PruneLimits {
  /** Elements nested deeper are left out (their text is kept). */
  maxDepth: number;
  /** Elements after this many are left out (their text is kept). */
  maxElements: number;
  /** Text after this many characters is left out. */
  maxTextChars: number;
}

export interface Pruned {
  html: string;
  /** Elements written. */
  elements: number;
  /** Whether text was left out because of `maxTextChars`. */
  cut: boolean;
}

export function pruneHtml(html: string, limits: PruneLimits): Pruned {
  const out: string[] = [];
  /** Open elements (kept or not), so each end tag knows whether its start tag was written. */
  const open: boolean[] = [];
  let dropping = 0; // depth inside a dropped element
  let metadata = false; // inside a JSON-LD script, which Readability reads for the title and author
  let elements = 0;
  let text = 0;
  let cut = false;
  let sawHtml = false;
  let sawBody = false;
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (dropping === 0 && name === "script" && attributes.type?.trim().toLowerCase() === "application/ld+json") {
          metadata = true;
          out.push('<script type="application/ld+json">');
          return;
        }
        if (dropping > 0 || DROPPED.has(name)) {
          dropping++;
          return;
        }
        if (name === "html") sawHtml = true;
        if (name === "body") sawBody = true;
        const kept = open.length < limits.maxDepth && elements < limits.maxElements && !cut;
        open.push(kept);
        if (!kept) return;
        elements++;
        let tag = `<${name}`;
        for (const [key, value] of Object.entries(attributes)) {
          if (ATTRIBUTE_NAME.test(key)) tag += ` ${key}="${escapeAttribute(value)}"`;
        }
        out.push(`${tag}>`);
      },
      ontext(data) {
        if (metadata) {
          out.push(data); // raw text: it cannot hold "</script", where the parser ended it
          return;
        }
        if (dropping > 0 || cut) return;
        const room = limits.maxTextChars - text;
        if (data.length > room) cut = true;
        const kept = data.length > room ? data.slice(0, room) : data;
        text += kept.length;
        out.push(escapeText(kept));
      },
      onclosetag(name) {
        if (metadata) {
          metadata = false;
          out.push("</script>");
          return;
        }
        if (dropping > 0) {
          dropping--;
          return;
        }
        if (open.pop() && !VOID.has(name)) out.push(`</${name}>`);
      },
    },
    { decodeEntities: true },
  );
  parser.end(html);
  let pruned = out.join("");
  if (!sawHtml) pruned = sawBody ? `<html>${pruned}</html>` : `<html><head></head><body>${pruned}</body></html>`;
  return { html: pruned, elements, cut };
}

function escapeText(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/"/g, "&quot;");
}
