import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { toolHarness } from "./harness.ts";

// web_search against a local server speaking the Brave Search API (GET ?q=&count=, X-Subscription-Token),
// reached through ASSISTANT_WEB_SEARCH_URL. The key must reach the server in its header and nowhere else.

const VAULT_KEY = "vault-search-key-7f3a91";
const ENV_KEY = "env-search-key-52c8d0";

interface Seen {
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
}

const seen: Seen[] = [];
let server: Server;
let endpoint: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    seen.push({ path: url.pathname, query: url.searchParams, headers: req.headers });
    if (url.pathname !== "/res/v1/web/search") {
      res.writeHead(404).end();
      return;
    }
    const q = url.searchParams.get("q") ?? "";
    const key = String(req.headers["x-subscription-token"] ?? "");
    const json = (status: number, body: unknown) =>
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    // Error bodies echo the key, as a careless service might: the tool must not pass them on.
    if (q === "unauthorized") return json(401, { error: `invalid token ${key}` });
    if (q === "busy") return json(429, { error: `rate limited ${key}` });
    if (q === "broken") return json(503, { error: `down ${key}` });
    if (q === "redirect") {
      res.writeHead(302, { location: "/elsewhere" }).end();
      return;
    }
    if (q === "huge") return json(200, { web: { results: [{ title: "x".repeat(2 * 1024 * 1024) }] } });
    if (q === "nothing") return json(200, { web: { results: [] } });
    json(200, {
      query: { original: q },
      web: {
        results: [
          {
            title: "The <strong>Rust</strong> Book",
            url: "https://doc.rust-lang.org/book/",
            description: "Learn <strong>Rust</strong> &amp; more &mdash; free.",
          },
          { title: "Rust by Example", url: "https://doc.rust-lang.org/rust-by-example/", description: "" },
        ],
      },
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/res/v1/web/search`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  seen.length = 0;
});

function harness(
  options: { enabled?: boolean; vaultKey?: string | null; envKey?: string | null } = {},
): ReturnType<typeof toolHarness> {
  const { enabled = true, vaultKey = VAULT_KEY, envKey = null } = options;
  return toolHarness({
    policy: { web_search_enabled: enabled },
    secrets: vaultKey ? { search_api_key: vaultKey } : {},
    env: { ASSISTANT_WEB_SEARCH_URL: endpoint, ...(envKey ? { SEARCH_API_KEY: envKey } : {}) },
  });
}

describe("web_search", () => {
  it("asks the configured service with the key in its header and lists the results as untrusted", async () => {
    const h = harness();
    const result = await h.invoke("web_search", { query: "rust book" });
    expect(result.status).toBe("ok");
    expect(seen).toHaveLength(1);
    expect(seen[0]!.query.get("q")).toBe("rust book");
    expect(seen[0]!.query.get("count")).toBe("8");
    expect(seen[0]!.headers["x-subscription-token"]).toBe(VAULT_KEY);
    expect(seen[0]!.headers.accept).toBe("application/json");
    expect(result.output).toContain('<untrusted_data source="web search results">');
    expect(result.output).toContain(
      "1. The Rust Book\n   https://doc.rust-lang.org/book/\n   Learn Rust & more — free.\n" +
        "2. Rust by Example\n   https://doc.rust-lang.org/rust-by-example/",
    );
    expect(result.output).not.toContain("<strong>");
    const events = JSON.stringify(h.eventsOf("tool_call_requested", "tool_call_completed"));
    expect(events).toContain("Rust by Example");
    expect(events).not.toContain(VAULT_KEY);
  });

  it("falls back to SEARCH_API_KEY, and prefers the vault key when both are set", async () => {
    const fromEnv = await harness({ vaultKey: null, envKey: ENV_KEY }).invoke("web_search", { query: "rust" });
    expect(fromEnv.status).toBe("ok");
    expect(seen[0]!.headers["x-subscription-token"]).toBe(ENV_KEY);
    expect(fromEnv.output).not.toContain(ENV_KEY);
    await harness({ envKey: ENV_KEY }).invoke("web_search", { query: "rust" });
    expect(seen[1]!.headers["x-subscription-token"]).toBe(VAULT_KEY);
  });

  it("is denied unless web_search_enabled", async () => {
    const result = await harness({ enabled: false }).invoke("web_search", { query: "rust" });
    expect(result.status).toBe("denied");
    expect(result.rule).toBe("web_search_enabled is false");
    expect(seen).toHaveLength(0);
  });

  it("says how to set a key when there is none", async () => {
    const result = await harness({ vaultKey: null }).invoke("web_search", { query: "rust" });
    expect(result.status).toBe("error");
    expect(result.output).toBe(
      "web_search failed: web search unavailable: set the vault key search_api_key (`assistant vault set search_api_key`) or SEARCH_API_KEY",
    );
    expect(seen).toHaveLength(0);
  });

  it("turns service errors into failures with the status and a hint, never the key", async () => {
    const cases = [
      ["unauthorized", /HTTP 401.*search_api_key/],
      ["busy", /HTTP 429.*try again/],
      ["broken", /HTTP 503.*try again later/],
      ["redirect", /HTTP 302.*not followed/],
      ["huge", /more than 1 MiB/],
    ] as const;
    for (const [query, message] of cases) {
      const h = harness({ vaultKey: null, envKey: ENV_KEY });
      const result = await h.invoke("web_search", { query });
      expect(result.status, query).toBe("error");
      expect(result.output).toMatch(message);
      expect(result.output).not.toContain(ENV_KEY);
      expect(JSON.stringify(h.eventsOf("tool_call_requested", "tool_call_completed"))).not.toContain(ENV_KEY);
    }
    expect(seen.some((s) => s.path === "/elsewhere")).toBe(false);
  });

  it("reports no results plainly and validates the query", async () => {
    const h = harness();
    const none = await h.invoke("web_search", { query: "nothing" });
    expect(none.status).toBe("ok");
    expect(none.output).toContain('No results for "nothing".');
    const long = await h.invoke("web_search", { query: "q".repeat(501) });
    expect(long.status).toBe("invalid_arguments");
    const empty = await h.invoke("web_search", { query: "   " });
    expect(empty.status).toBe("invalid_arguments");
  });
});
