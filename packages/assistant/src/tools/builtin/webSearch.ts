import { z } from "zod";
import { defineTool, ToolFailure } from "../tool.ts";

// web_search asks the user's search service (Brave Search API or one speaking its protocol). The endpoint is
// the user's own configuration (ASSISTANT_WEB_SEARCH_URL), so it is not subject to allowed_web_domains; the
// tool itself is allowed only by web_search_enabled. The API key goes in a header and never into output.

const RESULT_COUNT = 8;
const TIMEOUT_MS = 15_000;
const MAX_BYTES = 1024 * 1024;
const NO_KEY =
  "web search unavailable: set the vault key search_api_key (`assistant vault set search_api_key`) or SEARCH_API_KEY";

interface SearchResult {
  title?: unknown;
  url?: unknown;
  description?: unknown;
}

export const webSearchTool = defineTool({
  name: "web_search",
  description:
    "Search the web. Returns up to 8 results (title, address, snippet). Use web_fetch on a result's address to " +
    "read the page.",
  resource: "none",
  parameters: z.strictObject({
    query: z.string().trim().min(1).max(500).describe("What to search for"),
  }),
  async execute(args, ctx) {
    const key = ctx.secret("search_api_key") ?? (ctx.env.SEARCH_API_KEY?.trim() || null);
    if (!key) throw new ToolFailure(NO_KEY);
    const url = new URL(ctx.settings.webSearchUrl); // an http(s) URL, checked when the daemon started
    url.searchParams.set("q", args.query);
    url.searchParams.set("count", String(RESULT_COUNT));

    const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(TIMEOUT_MS)]);
    let res: Response;
    try {
      res = await fetch(url, {
        method: "GET",
        headers: { Accept: "application/json", "X-Subscription-Token": key },
        // A redirect would carry the key header to wherever it points: never follow one.
        redirect: "manual",
        signal,
      });
    } catch (error) {
      if (ctx.signal.aborted) throw error;
      if (signal.aborted) throw new ToolFailure(`the search service did not answer within ${TIMEOUT_MS / 1000} s`);
      throw new ToolFailure(`could not reach the search service (${causeOf(error)})`);
    }
    if (!res.ok) {
      await res.body?.cancel().catch(() => {});
      throw new ToolFailure(statusFailure(res.status));
    }
    const raw = await readCapped(res, signal, ctx.signal);
    let data: unknown;
    try {
      data = JSON.parse(raw);
    } catch {
      throw new ToolFailure("the search service answered with something that is not JSON");
    }
    const results = resultsOf(data);
    if (results.length === 0) return { text: `No results for "${args.query}".`, untrusted: "web search results" };
    // Snippets carry <strong> and entities. The HTML reader is loaded on first use (its libraries are heavy).
    const { htmlSnippetText } = await import("../html.ts");
    const lines = results.slice(0, RESULT_COUNT).map((r, i) => {
      const title = htmlSnippetText(typeof r.title === "string" ? r.title : "") || "(untitled)";
      const link = typeof r.url === "string" ? r.url : "";
      const description = htmlSnippetText(typeof r.description === "string" ? r.description : "");
      return [`${i + 1}. ${title}`, link ? `   ${link}` : null, description ? `   ${description}` : null]
        .filter((l) => l !== null)
        .join("\n");
    });
    return { text: lines.join("\n"), untrusted: "web search results" };
  },
});

function resultsOf(data: unknown): SearchResult[] {
  if (!data || typeof data !== "object") return [];
  const web = (data as { web?: unknown }).web;
  if (!web || typeof web !== "object") return [];
  const results = (web as { results?: unknown }).results;
  if (!Array.isArray(results)) return [];
  return results.filter((r): r is SearchResult => r !== null && typeof r === "object");
}

function statusFailure(status: number): string {
  if (status === 401 || status === 403) {
    return `the search service refused the API key (HTTP ${status}); check the vault key search_api_key or SEARCH_API_KEY`;
  }
  if (status === 429) return "the search service is rate limiting (HTTP 429); wait a little and try again";
  if (status >= 500) return `the search service failed (HTTP ${status}); try again later`;
  if (status >= 300 && status < 400) {
    return `the search service answered with a redirect (HTTP ${status}), which is not followed; check ASSISTANT_WEB_SEARCH_URL`;
  }
  return `the search service answered HTTP ${status}; check the query and ASSISTANT_WEB_SEARCH_URL`;
}

function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (cause && typeof cause.code === "string") return cause.code;
  if (cause && typeof cause.message === "string") return cause.message;
  return (error as Error).message;
}

async function readCapped(res: Response, signal: AbortSignal, outer: AbortSignal): Promise<string> {
  if (!res.body) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.length;
      if (total > MAX_BYTES) {
        await reader.cancel().catch(() => {});
        throw new ToolFailure("the search service answered with more than 1 MiB; refused");
      }
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof ToolFailure || outer.aborted) throw error;
    if (signal.aborted) throw new ToolFailure(`the search service did not answer within ${TIMEOUT_MS / 1000} s`);
    throw new ToolFailure(`the search answer broke off (${causeOf(error)})`);
  }
  return Buffer.concat(chunks).toString("utf8");
}
