import { z } from "zod";
import { type SafeResponse, safeFetch } from "../safeFetch.ts";
import { defineTool, ToolFailure } from "../tool.ts";

const MAX_URL_CHARS = 8192;
const SNIFF_BYTES = 8192;

export const webFetchTool = defineTool({
  name: "web_fetch",
  description:
    "Fetch a web page (http or https, GET) and read it as markdown-like text: an article is shown alone (reader " +
    "view: menus, ads and footers left out), any other page whole, with # headings, [text](url) links and " +
    "| tables |; plain text and JSON come as they are. Only hosts in allowed_web_domains can be fetched. Use " +
    "web_search first when you do not know the address.",
  resource: "web",
  parameters: z.strictObject({
    url: z.string().min(1).max(MAX_URL_CHARS).describe("The absolute http(s) URL to fetch"),
    whole_page: z
      .boolean()
      .optional()
      .describe("Read the whole page (menus, footers, every link) rather than the article alone"),
  }),
  async execute(args, ctx) {
    let url: URL;
    try {
      url = new URL(args.url.trim());
    } catch {
      throw new ToolFailure(
        `${JSON.stringify(args.url.slice(0, 200))} is not an absolute URL (e.g. https://example.org/page)`,
      );
    }
    const res = await safeFetch(url, {
      permit: (target) => ctx.permit({ kind: "web", url: target }),
      signal: ctx.signal,
    });
    return { text: await describeResponse(res, args.whole_page), untrusted: `web page ${res.url.href}` };
  },
});

/** The tool's text for one response: a short head (URL, status, title, what was read) and the readable body. */
export async function describeResponse(res: SafeResponse, wholePage = false): Promise<string> {
  const head = [`URL: ${res.url.href}`, `Status: ${res.status}${res.statusText ? ` ${res.statusText}` : ""}`];
  const kind = contentKind(res);
  let body: string;
  if (kind === "binary") {
    body = `binary content (${res.mediaType || "unknown type"}, ${res.body.length}${res.truncated ? "+" : ""} bytes) not shown`;
  } else {
    const text = decode(res.body, res.charset ?? (kind === "html" ? metaCharset(res.body) : null));
    if (kind === "html") {
      // Loaded on first use: the reader's libraries are heavy and the daemon starts without them.
      const { htmlToText } = await import("../html.ts");
      const page = htmlToText(text, res.url, { wholePage });
      if (page.title) head.push(`Title: ${page.title}`);
      if (page.byline) head.push(`Byline: ${page.byline}`);
      head.push(page.article ? "Read: the article (reader view)" : "Read: the whole page");
      body = page.text;
    } else body = text;
    if (body.trim().length === 0) body = "(empty)";
    if (res.truncated) {
      body += `\n[... truncated: the response is larger than ${res.body.length} bytes and only its start was read ...]`;
    }
  }
  if (res.redirects.length > 0) head.push(`Redirected from: ${res.redirects[0]!.href}`);
  return `${head.join("\n")}\n\n${body}`;
}

function contentKind(res: SafeResponse): "html" | "text" | "binary" {
  const type = res.mediaType;
  if (type === "text/html" || type === "application/xhtml+xml") return "html";
  if (
    type.startsWith("text/") ||
    type === "application/json" ||
    type.endsWith("+json") ||
    type === "application/xml" ||
    type.endsWith("+xml") ||
    type === "application/javascript" ||
    type === "application/x-ndjson"
  ) {
    return "text";
  }
  if (type !== "" && type !== "application/octet-stream") return "binary";
  // No type (or a generic one): look at the bytes.
  const probe = res.body.subarray(0, SNIFF_BYTES);
  if (probe.includes(0)) return "binary";
  const start = probe.toString("latin1", 0, 512).trimStart().slice(0, 15).toLowerCase();
  return start.startsWith("<!doctype html") || start.startsWith("<html") ? "html" : "text";
}

function decode(body: Buffer, charset: string | null): string {
  if (charset) {
    try {
      return new TextDecoder(charset).decode(body);
    } catch {
      // an unknown label: fall back to UTF-8
    }
  }
  return new TextDecoder("utf-8").decode(body);
}

/** A `<meta charset=...>` (or http-equiv Content-Type) in the first bytes of an HTML page, or null. */
function metaCharset(body: Buffer): string | null {
  const head = body.toString("latin1", 0, Math.min(body.length, 2048)).toLowerCase();
  let at = head.indexOf("<meta");
  while (at >= 0) {
    const end = head.indexOf(">", at);
    if (end < 0) return null;
    const tag = head.slice(at, end);
    const cs = tag.indexOf("charset=");
    if (cs >= 0) {
      let i = cs + 8;
      while (tag[i] === '"' || tag[i] === "'" || tag[i] === " ") i++;
      const startValue = i;
      while (i < tag.length && /[a-z0-9_.:-]/.test(tag[i]!)) i++;
      if (i > startValue) return tag.slice(startValue, i);
    }
    at = head.indexOf("<meta", end);
  }
  return null;
}
