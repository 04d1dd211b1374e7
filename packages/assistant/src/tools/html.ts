import { isProbablyReaderable, Readability } from "@mozilla/readability";
import { parseHTML } from "linkedom";
import { type DomNode, toMarkdown } from "./htmlMarkdown.ts";
import { nestingDepth, pruneHtml } from "./htmlPrune.ts";

// HTML to markdown-like text for web_fetch (docs/tools.md#web). htmlparser2 prunes the page (htmlPrune.ts: no
// scripts, styles, SVG or frames; nesting, elements and text bounded), linkedom builds its DOM, Mozilla Readability
// (Firefox's reader view) finds the article, and htmlMarkdown.ts writes it with `#` headings, `[text](url)` links,
// lists, pipe tables and fenced code. A page that is not an article (a home page, a search page, a form) is
// written whole. Heavy: callers load it with `import()`.

export interface HtmlText {
  title: string | null;
  text: string;
  /** The article's author line (reader view only). */
  byline: string | null;
  /** Whether the text is the article alone (menus, ads, footers left out) rather than the whole page. */
  article: boolean;
}

interface DomDocument {
  title: string;
  body: DomNode | null;
  documentElement: DomNode;
}

/** Bounds that keep a 2 MiB page (safeFetch's cap) well under a second; web_fetch shows 12,000 characters anyway. */
const LIMITS = { maxDepth: 256, maxElements: 20_000, maxTextChars: 100_000 };
/** Deeper pages are not parsed: htmlparser2's time grows with the square of the depth (100,000 deep: seconds). */
const MAX_PARSED_DEPTH = 4_096;
/** Readability's time grows with the elements (0.2-0.4 s at 13,000): past this many the page is written whole. */
const MAX_READER_ELEMENTS = 12_000;
/** Readability's test for "is this worth a reader view", a little more generous with short articles. */
const READERABLE = { minContentLength: 140, minScore: 20 };
/** An article shorter than this is more likely a fragment Readability picked from a page that has none. */
const MIN_ARTICLE_CHARS = 200;

/**
 * Converts an HTML document (or fragment) to readable text: the article when Readability finds one (unless
 * `wholePage`), else the whole page. `baseUrl` resolves relative links.
 */
export function htmlToText(html: string, baseUrl?: string | URL, options: { wholePage?: boolean } = {}): HtmlText {
  const depth = nestingDepth(html);
  if (depth > MAX_PARSED_DEPTH) {
    const text = `[the page nests its elements ${depth} deep (a browser stops at 512), so it is not read]`;
    return { title: null, text, byline: null, article: false };
  }
  const base = baseOf(baseUrl);
  const pruned = pruneHtml(html, LIMITS);
  const more = pruned.cut
    ? `\n\n[... the page goes on: the reader stops after ${LIMITS.maxTextChars} characters of text ...]`
    : "";
  let document = parse(pruned.html);
  const title = clean(document.title) || null;
  const reader = !options.wholePage && pruned.elements <= MAX_READER_ELEMENTS;
  if (reader && isProbablyReaderable(document as never, READERABLE)) {
    const serializer = (node: unknown) => node as DomNode;
    const found = new Readability<DomNode>(document as never, { serializer, keepClasses: true }).parse();
    if (found?.content && clean(found.textContent).length >= MIN_ARTICLE_CHARS) {
      const text = toMarkdown(found.content, base) + more;
      return { title: clean(found.title) || title, text, byline: clean(found.byline) || null, article: true };
    }
    document = parse(pruned.html); // Readability changed the document it read
  }
  return {
    title,
    text: toMarkdown(document.body ?? document.documentElement, base) + more,
    byline: null,
    article: false,
  };
}

/** The visible text of an HTML snippet, on one line (search result snippets with <strong> and entities). */
export function htmlSnippetText(html: string): string {
  if (nestingDepth(html) > MAX_PARSED_DEPTH) return "";
  const document = parse(pruneHtml(html, LIMITS).html);
  return clean((document.body ?? document.documentElement).textContent);
}

function parse(prunedHtml: string): DomDocument {
  return parseHTML(prunedHtml).document as unknown as DomDocument;
}

function baseOf(baseUrl: string | URL | undefined): URL | null {
  if (baseUrl === undefined) return null;
  try {
    return new URL(baseUrl);
  } catch {
    return null;
  }
}

function clean(text: string | null | undefined): string {
  return (text ?? "").replace(/\s+/g, " ").trim();
}
