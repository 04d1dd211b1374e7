// The last step of the HTML reader (html.ts): a DOM subtree written as markdown-like text in one walk, linear in
// the size of the tree (html-markdown libraries were measured superlinear: node-html-markdown re-reads its whole
// output on each append and pads table columns to the widest cell; turndown needs a second DOM). Headings are
// `#`, links `[text](url)` (http, https and mailto, resolved against the page), lists `- ` and `1. `, tables pipe
// rows, code fenced, quotes `> `; images become their alt text. The tree is pruned first (htmlPrune.ts), so its
// depth is bounded and the recursion here is too.

/** The DOM members used here: linkedom implements them, and the project compiles without the DOM library. */
export interface DomNode {
  nodeType: number;
  nodeName: string;
  textContent: string | null;
  childNodes: ArrayLike<DomNode>;
  getAttribute(name: string): string | null;
}

const ELEMENT = 1;
const TEXT = 3;
/** Elements that start a new block; anything else is inline. */
const BLOCKS = new Set([
  "address",
  "article",
  "aside",
  "blockquote",
  "body",
  "center",
  "dd",
  "details",
  "dialog",
  "div",
  "dl",
  "dt",
  "fieldset",
  "figcaption",
  "figure",
  "footer",
  "form",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "header",
  "hgroup",
  "hr",
  "html",
  "legend",
  "li",
  "main",
  "nav",
  "ol",
  "p",
  "pre",
  "section",
  "summary",
  "table",
  "ul",
]);
/** Kept by the pruning for the reader view, never shown as text. */
const UNSHOWN = new Set(["head", "title"]);
const HEADING = /^h([1-6])$/;
const SPACES = /\s+/g;

export function toMarkdown(root: DomNode, base: URL | null): string {
  const lines = blocksOf(root, base).join("\n\n").split("\n");
  return lines
    .map((line) => line.trimEnd())
    .join("\n")
    .trim();
}

function nameOf(node: DomNode): string {
  return node.nodeName.toLowerCase();
}

/** The blocks of an element's content (paragraph texts, headings, lists...), in order. */
function blocksOf(parent: DomNode, base: URL | null): string[] {
  const blocks: string[] = [];
  let inline: string[] = [];
  const flush = () => {
    const text = paragraph(inline.join(""));
    if (text.length > 0) blocks.push(text);
    inline = [];
  };
  for (const child of Array.from(parent.childNodes)) {
    if (child.nodeType === TEXT) inline.push(child.textContent ?? "");
    else if (child.nodeType !== ELEMENT || UNSHOWN.has(nameOf(child))) continue;
    else if (BLOCKS.has(nameOf(child))) {
      flush();
      for (const block of blockOf(child, base)) blocks.push(block);
    } else inline.push(inlineOf(child, base));
  }
  flush();
  return blocks;
}

/** Inline text: spaces collapse, but the line breaks of <br> stay. */
function paragraph(text: string): string {
  return text
    .split("\n")
    .map((line) => line.replace(SPACES, " ").trim())
    .filter((line) => line.length > 0)
    .join("\n");
}

function blockOf(element: DomNode, base: URL | null): string[] {
  const name = nameOf(element);
  const heading = HEADING.exec(name);
  if (heading) {
    const text = flat(inlineOf(element, base));
    return text ? [`${"#".repeat(Number(heading[1]))} ${text}`] : [];
  }
  switch (name) {
    case "ul":
    case "ol":
      return list(element, base);
    case "pre":
      return [fenced(element)];
    case "table":
      return table(element, base);
    case "hr":
      return ["---"];
    case "blockquote": {
      const lines = blocksOf(element, base).join("\n\n").split("\n");
      return lines.length > 0 && lines[0] !== "" ? [lines.map((line) => (line ? `> ${line}` : ">")).join("\n")] : [];
    }
    default:
      return blocksOf(element, base);
  }
}

function list(element: DomNode, base: URL | null): string[] {
  const ordered = nameOf(element) === "ol";
  const items: string[] = [];
  for (const child of Array.from(element.childNodes)) {
    if (child.nodeType !== ELEMENT) continue;
    // A stray element between items is an item of its own, as browsers show it.
    const marker = ordered ? `${items.length + 1}. ` : "- ";
    const text = blocksOf(child, base).join("\n");
    if (text.length === 0) continue;
    const indent = " ".repeat(marker.length);
    items.push(marker + text.split("\n").join(`\n${indent}`));
  }
  return items.length > 0 ? [items.join("\n")] : [];
}

function fenced(pre: DomNode): string {
  const code = (pre.textContent ?? "").replace(/\r\n?/g, "\n").replace(/\n+$/, "");
  const child = Array.from(pre.childNodes).find((node) => node.nodeType === ELEMENT && nameOf(node) === "code");
  const classes = `${pre.getAttribute("class") ?? ""} ${child?.getAttribute("class") ?? ""}`;
  const language = /(?:^|\s)(?:language|lang)-([\w+#-]+)/.exec(classes)?.[1] ?? "";
  // A fence longer than any backtick run inside, so the code cannot close it.
  let longest = 0;
  for (const run of code.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  const fence = "`".repeat(Math.max(3, longest + 1));
  return `${fence}${language}\n${code}\n${fence}`;
}

/** Pipe rows, the first followed by a separator; a cell is one line. Nested tables read as cell text. */
function table(element: DomNode, base: URL | null): string[] {
  const rows: string[] = [];
  let caption = "";
  const readRows = (node: DomNode) => {
    for (const child of Array.from(node.childNodes)) {
      if (child.nodeType !== ELEMENT) continue;
      const name = nameOf(child);
      if (name === "tr") rows.push(row(child, base));
      else if (name === "thead" || name === "tbody" || name === "tfoot") readRows(child);
      else if (name === "caption") caption = flat(inlineOf(child, base));
    }
  };
  readRows(element);
  const filled = rows.filter((r) => r.length > 0);
  if (filled.length === 0) return caption ? [caption] : [];
  const columns = filled[0]!.split(" | ").length;
  const lines = [filled[0]!, `|${" --- |".repeat(columns)}`, ...filled.slice(1)];
  return [...(caption ? [caption] : []), lines.join("\n")];
}

function row(tr: DomNode, base: URL | null): string {
  const cells: string[] = [];
  for (const cell of Array.from(tr.childNodes)) {
    if (cell.nodeType !== ELEMENT || (nameOf(cell) !== "td" && nameOf(cell) !== "th")) continue;
    cells.push(flat(blocksOf(cell, base).join(" ")).replace(/\|/g, "\\|"));
  }
  return cells.length > 0 && cells.some((c) => c.length > 0) ? `| ${cells.join(" | ")} |` : "";
}

/** An inline element's text; block elements inside it (a card in a link) read as inline text. */
function inlineOf(element: DomNode, base: URL | null): string {
  const name = nameOf(element);
  if (name === "img") {
    const alt = flat(element.getAttribute("alt") ?? "");
    return alt ? ` ${alt} ` : "";
  }
  if (name === "br") return "\n";
  if (name === "code" || name === "kbd" || name === "samp") {
    const code = flat(element.textContent ?? "");
    return code ? `\`${code}\`` : "";
  }
  let text = "";
  for (const child of Array.from(element.childNodes)) {
    if (child.nodeType === TEXT) text += child.textContent ?? "";
    else if (child.nodeType !== ELEMENT || UNSHOWN.has(nameOf(child))) continue;
    else text += BLOCKS.has(nameOf(child)) ? ` ${inlineOf(child, base)} ` : inlineOf(child, base);
  }
  switch (name) {
    case "a":
      return link(text, element.getAttribute("href"), base);
    case "strong":
    case "b":
      return emphasis(text, "**");
    case "em":
    case "i":
      return emphasis(text, "_");
    default:
      return text;
  }
}

function link(text: string, href: string | null, base: URL | null): string {
  const target = href === null ? null : resolveLink(href, base);
  const shown = flat(text);
  if (target === null) return text;
  if (shown.length === 0) return ` ${target} `;
  return `${leading(text)}${shown === target ? target : `[${shown}](${target})`}${trailing(text)}`;
}

function emphasis(text: string, mark: string): string {
  const shown = flat(text);
  return shown ? `${leading(text)}${mark}${shown}${mark}${trailing(text)}` : text;
}

function leading(text: string): string {
  return /^\s/.test(text) ? " " : "";
}

function trailing(text: string): string {
  return /\s$/.test(text) ? " " : "";
}

function flat(text: string): string {
  return text.replace(SPACES, " ").trim();
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
