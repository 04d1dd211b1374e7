import type { LookupAddress } from "node:dns";
import { readFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ToolsPolicyInput } from "../../src/config/schemas/toolsPolicy.ts";
import { htmlToText } from "../../src/tools/html.ts";
import { type HostLookup, safeFetch } from "../../src/tools/safeFetch.ts";
import { ToolDenied, ToolFailure } from "../../src/tools/tool.ts";
import { toolHarness } from "./harness.ts";
import { engineFor } from "./policy/helpers.ts";

// web_fetch against real HTTP servers on 127.0.0.1: the policy decides each URL (first and every redirect hop),
// then safeFetch resolves the host, refuses public names that lead to non-public addresses and connects only to
// the checked address. DNS answers that real DNS cannot give (a public name resolving to 127.0.0.1) are injected
// through safeFetch's `lookup` option with the same policy engine the tool uses.

interface Seen {
  path: string;
  method: string;
  headers: IncomingHttpHeaders;
}

const seen: Seen[] = [];
let server: Server;
let port: number;
let origin: string;
/** A second server on 127.0.0.2 with the same port (Linux routes all of 127/8 to lo), or null where unavailable. */
let shadow: Server | null = null;

const PAGE = `<!doctype html><html><head><title>Test &amp; page</title>
<script>document.write("SCRIPT-TEXT")</script><style>body { color: red }</style></head>
<body><h1>Hello</h1><p>Read <a href="/docs?a=1&amp;b=2">the docs</a> now.</p>
<ul><li>first</li><li>second</li></ul><noscript>NOSCRIPT-TEXT</noscript></body></html>`;

/** A news page with menus, ads and a footer (test/tools/fixtures, shared with htmlReader.test.ts). */
const ARTICLE = readFileSync(join(import.meta.dirname, "fixtures", "news-article.html"), "utf8");

function handle(path: string, res: ServerResponse): void {
  const url = new URL(path, "http://x");
  switch (url.pathname) {
    case "/page":
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(PAGE);
      return;
    case "/json":
      res.writeHead(200, { "content-type": "application/json" }).end('{"answer":42}');
      return;
    case "/bin":
      res.writeHead(200, { "content-type": "image/png" }).end(Buffer.alloc(1234, 7));
      return;
    case "/gzip":
      res
        .writeHead(200, { "content-type": "text/html", "content-encoding": "gzip" })
        .end(gzipSync("<p>compressed body</p>"));
      return;
    case "/missing":
      res.writeHead(404, { "content-type": "text/plain" }).end("no such page");
      return;
    case "/echo":
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(seen.at(-1)));
      return;
    case "/big":
      res.writeHead(200, { "content-type": "text/plain" }).end("y".repeat(3 * 1024 * 1024));
      return;
    case "/redirect":
      res.writeHead(302, { location: url.searchParams.get("to") ?? "/page", "set-cookie": "sid=abc123; Path=/" }).end();
      return;
    case "/loop":
      res.writeHead(302, { location: "/loop" }).end();
      return;
    case "/drip": {
      res.writeHead(200, { "content-type": "text/plain" });
      const timer = setInterval(() => res.write("drip "), 20);
      res.on("close", () => clearInterval(timer));
      return;
    }
    case "/stall":
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("the start, then nothing");
      return;
    case "/hang":
      return; // never answers
    case "/who":
      res.writeHead(200, { "content-type": "text/plain" }).end("server A (127.0.0.1)");
      return;
    case "/article":
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(ARTICLE);
      return;
    default:
      res.writeHead(404).end();
  }
}

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push({ path: req.url ?? "", method: req.method ?? "", headers: req.headers });
    handle(req.url ?? "/", res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
  origin = `http://127.0.0.1:${port}`;
  const second = createServer((_req, res) => res.end("server B (127.0.0.2)"));
  shadow = await new Promise<Server | null>((resolve) => {
    second.once("error", () => resolve(null));
    second.listen(port, "127.0.0.2", () => resolve(second));
  });
});

afterAll(async () => {
  server.closeAllConnections();
  shadow?.closeAllConnections();
  await Promise.all([
    new Promise((resolve) => server.close(resolve)),
    shadow ? new Promise((resolve) => shadow?.close(resolve)) : null,
  ]);
});

beforeEach(() => {
  seen.length = 0;
});

const fetchTool = (
  policy: ToolsPolicyInput,
  url: string,
  options?: { signal?: AbortSignal },
  args: { whole_page?: boolean } = {},
) => toolHarness({ policy }).invoke("web_fetch", { url, ...args }, options);

/** The tool's permit, over the same engine, for calling safeFetch directly. */
function permitFor(policy: ToolsPolicyInput): (url: URL) => Promise<void> {
  const engine = engineFor(policy);
  return async (url) => {
    const decision = engine.decide({ kind: "web", tool: "web_fetch", url });
    if (decision.effect !== "allow")
      throw new ToolDenied(decision.rule, decision.source, `Blocked by ${decision.rule}.`);
  };
}

/** A resolver that answers `addresses` for every name and counts its calls. */
function fakeDns(...addresses: string[]): HostLookup & { calls: string[] } {
  const calls: string[] = [];
  const lookup = async (hostname: string): Promise<LookupAddress[]> => {
    calls.push(hostname);
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  return Object.assign(lookup, { calls });
}

describe("web_fetch through the tool runner", () => {
  it("fetches a listed 127.0.0.1 page as readable text, marked untrusted", async () => {
    const result = await fetchTool({ allowed_web_domains: ["127.0.0.1"] }, `${origin}/page`);
    expect(result.status).toBe("ok");
    const out = result.output;
    expect(out).toContain(`<untrusted_data source="web page ${origin}/page">`);
    // Too short for a reader view: the whole page is read.
    expect(out).toContain(`URL: ${origin}/page\nStatus: 200 OK\nTitle: Test & page\nRead: the whole page\n\n# Hello`);
    expect(out).toContain(`Read [the docs](${origin}/docs?a=1&b=2) now.`);
    expect(out).toContain("- first\n- second");
    expect(out).not.toMatch(/SCRIPT-TEXT|NOSCRIPT-TEXT|color: red/);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.method).toBe("GET");
    expect(seen[0]!.headers["user-agent"]).toBe("assistant-web-fetch");
    expect(seen[0]!.headers.cookie).toBeUndefined();
    expect(seen[0]!.headers.authorization).toBeUndefined();
  });

  it("refuses 127.0.0.1 and localhost under `*`: non-public hosts must be listed exactly", async () => {
    for (const url of [`${origin}/page`, `http://localhost:${port}/page`, `http://[::ffff:127.0.0.1]:${port}/page`]) {
      const result = await fetchTool({ allowed_web_domains: ["*"] }, url);
      expect(result.status, url).toBe("denied");
      expect(result.rule).toMatch(/non-public hosts must be listed exactly/);
    }
    expect(seen).toHaveLength(0);
  });

  it("fetches localhost only when localhost itself is listed", async () => {
    const denied = await fetchTool({ allowed_web_domains: ["127.0.0.1"] }, `http://localhost:${port}/who`);
    expect(denied.status).toBe("denied");
    const allowed = await fetchTool({ allowed_web_domains: ["localhost"] }, `http://localhost:${port}/who`);
    expect(allowed.status).toBe("ok");
    expect(allowed.output).toContain("server A (127.0.0.1)");
  });

  it("normalises decimal, hex and short IPv4 forms to 127.0.0.1: refused unless 127.0.0.1 is listed", async () => {
    for (const host of ["2130706433", "0x7f.1", "0177.0.0.1", "127.1"]) {
      const url = `http://${host}:${port}/page`;
      const refused = await fetchTool({ allowed_web_domains: ["*", "example.org"] }, url);
      expect(refused.status, host).toBe("denied");
      expect(refused.rule).toContain("127.0.0.1");
      const listed = await fetchTool({ allowed_web_domains: ["127.0.0.1"] }, url);
      expect(listed.status, host).toBe("ok");
      expect(listed.output).toContain(`URL: ${origin}/page`);
    }
  });

  it("lets blocked_web_domains win over the allow list", async () => {
    const result = await fetchTool(
      { allowed_web_domains: ["127.0.0.1", "*"], blocked_web_domains: ["127.0.0.1"] },
      `${origin}/page`,
    );
    expect(result.status).toBe("denied");
    expect(result.rule).toBe("blocked_web_domains: 127.0.0.1");
    expect(seen).toHaveLength(0);
  });

  it("does not take lookalike names for the listed address", async () => {
    for (const host of ["127.0.0.1.evil.test", "127.0.0.1.nip.io", "evil-127.0.0.1.test"]) {
      const result = await fetchTool({ allowed_web_domains: ["127.0.0.1"] }, `http://${host}:${port}/page`);
      expect(result.status, host).toBe("denied");
      expect(result.rule).toBe(`allowed_web_domains does not list ${host}`);
    }
    expect(seen).toHaveLength(0);
  });

  it("refuses redirects to a metadata address, an unlisted host or a file URL", async () => {
    const targets = [
      ["http://169.254.169.254/latest/meta-data/", /link-local host 169\.254\.169\.254/],
      ["http://example.com/", /allowed_web_domains does not list example\.com/],
      ["file:///etc/passwd", /scheme file: is not allowed/],
      [`http://localhost:${port}/page`, /loopback host localhost/],
    ] as const;
    for (const [target, rule] of targets) {
      const url = `${origin}/redirect?to=${encodeURIComponent(target)}`;
      const result = await fetchTool({ allowed_web_domains: ["127.0.0.1"] }, url);
      expect(result.status, target).toBe("denied");
      expect(result.rule).toMatch(rule);
      expect(result.output).toContain(`redirects to ${target}`);
    }
    // Only the redirecting server was ever asked.
    expect(seen.every((s) => s.path.startsWith("/redirect"))).toBe(true);
  });

  it("follows an allowed redirect without sending back cookies, and stops after 5", async () => {
    const ok = await fetchTool({ allowed_web_domains: ["127.0.0.1"] }, `${origin}/redirect?to=/echo`);
    expect(ok.status).toBe("ok");
    expect(ok.output).toContain(`URL: ${origin}/echo`);
    expect(ok.output).toContain(`Redirected from: ${origin}/redirect?to=/echo`);
    const echoed = seen.find((s) => s.path === "/echo");
    expect(echoed?.headers.cookie).toBeUndefined();
    expect(echoed?.headers["user-agent"]).toBe("assistant-web-fetch");

    seen.length = 0;
    const loop = await fetchTool({ allowed_web_domains: ["127.0.0.1"] }, `${origin}/loop`);
    expect(loop.status).toBe("error");
    expect(loop.output).toMatch(/too many redirects \(more than 5\)/);
    expect(seen).toHaveLength(6);
  });

  it("reads an article page as its article (reader view), or whole with whole_page", async () => {
    const policy = { allowed_web_domains: ["127.0.0.1"] };
    const article = await fetchTool(policy, `${origin}/article`);
    expect(article.status).toBe("ok");
    expect(article.output).toContain(
      "Title: City council approves new cycling network after two-year debate\nByline: Maria Lindqvist\n" +
        "Read: the article (reader view)",
    );
    expect(article.output).toContain("## What changes, and when");
    expect(article.output).toContain(`[traffic study](${origin}/documents/cycling-network-study.pdf)`);
    expect(article.output).not.toMatch(/We use cookies|Most read|Subscribe from|All rights reserved|gtag/);

    const whole = await fetchTool(policy, `${origin}/article`, {}, { whole_page: true });
    expect(whole.output).toContain("Read: the whole page");
    expect(whole.output).toContain("## What changes, and when");
    expect(whole.output).toMatch(/We use cookies[\s\S]*Most read[\s\S]*All rights reserved/);
    expect(whole.output).not.toMatch(/gtag|TRACKING-PIXEL-TEXT|font-family/);
  });

  it("waits for the review queue when web_fetch requires approval; the approval never widens the policy", async () => {
    const h = toolHarness({ policy: { allowed_web_domains: ["127.0.0.1"], require_approval: ["web_fetch"] } });
    const pending = h.invoke("web_fetch", { url: `${origin}/redirect?to=/page` });
    await h.answerNext("approve");
    const result = await pending;
    expect(result.status).toBe("ok");
    expect(result.output).toContain("Title: Test & page");
    expect(seen.map((s) => s.path)).toEqual(["/redirect?to=/page", "/page"]);

    // The redirect target is still checked against the lists after the call was approved.
    const metadata = encodeURIComponent("http://169.254.169.254/");
    const refused = h.invoke("web_fetch", { url: `${origin}/redirect?to=${metadata}` });
    await h.answerNext("approve");
    expect((await refused).status).toBe("denied");
  });

  it("shows HTTP errors, JSON, compressed pages and binary content as results", async () => {
    const policy = { allowed_web_domains: ["127.0.0.1"] };
    const missing = await fetchTool(policy, `${origin}/missing`);
    expect(missing.status).toBe("ok");
    expect(missing.output).toContain("Status: 404 Not Found\n\nno such page");
    const json = await fetchTool(policy, `${origin}/json`);
    expect(json.output).toContain('{"answer":42}');
    const gzip = await fetchTool(policy, `${origin}/gzip`);
    expect(gzip.output).toContain("compressed body");
    const bin = await fetchTool(policy, `${origin}/bin`);
    expect(bin.output).toContain("binary content (image/png, 1234 bytes) not shown");
  });

  it("caps the body at 2 MiB and says so", async () => {
    const result = await fetchTool({ allowed_web_domains: ["127.0.0.1"] }, `${origin}/big`);
    expect(result.status).toBe("ok");
    expect(result.output).toContain("truncated: the response is larger than 2097152 bytes");
  });

  it("is cancelled with the call", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 150);
    const started = Date.now();
    const result = await fetchTool({ allowed_web_domains: ["127.0.0.1"] }, `${origin}/drip`, {
      signal: controller.signal,
    });
    expect(result.status).toBe("error");
    expect(result.output).toBe("web_fetch was cancelled.");
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("refuses malformed URLs, credentials in URLs and names that do not resolve", async () => {
    const bad = await fetchTool({ allowed_web_domains: ["*"] }, "not a url");
    expect(bad.status).toBe("error");
    expect(bad.output).toMatch(/is not an absolute URL/);
    const creds = await fetchTool({ allowed_web_domains: ["127.0.0.1"] }, `http://user:pw@127.0.0.1:${port}/page`);
    expect(creds.status).toBe("error");
    expect(creds.output).toMatch(/user name or password/);
    const nx = await fetchTool({ allowed_web_domains: ["*"] }, "http://nothing-here.invalid/");
    expect(nx.status).toBe("error");
    expect(nx.output).toMatch(/could not resolve nothing-here\.invalid/);
    expect(seen).toHaveLength(0);
  });
});

describe("safeFetch: resolved addresses (injected DNS, the real policy engine)", () => {
  const anyPublic = permitFor({ allowed_web_domains: ["*"] });
  const cases = [
    ["127.0.0.1", "loopback"],
    ["10.1.2.3", "private"],
    ["192.168.0.10", "private"],
    ["169.254.169.254", "link-local"],
    ["100.64.0.1", "cgnat"],
    ["0.0.0.0", "unspecified"],
    ["::1", "loopback"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:a9fe:a9fe", "link-local"],
    ["fd00::1", "private"],
  ] as const;

  for (const [address, cls] of cases) {
    it(`refuses a public name that resolves to ${address} (${cls})`, async () => {
      const dns = fakeDns(address);
      const attempt = safeFetch(new URL(`http://example.test:${port}/page`), {
        permit: anyPublic,
        lookup: dns,
        totalTimeoutMs: 2000,
      });
      await expect(attempt).rejects.toThrow(ToolDenied);
      await expect(attempt).rejects.toThrow(`example.test resolves to ${address} (${cls}); refused (SSRF protection)`);
      expect(dns.calls).toEqual(["example.test"]);
      expect(seen).toHaveLength(0);
    });
  }

  it("refuses when any one of several addresses is not public", async () => {
    const dns = fakeDns("93.184.215.14", "127.0.0.1");
    await expect(
      safeFetch(new URL(`http://example.test:${port}/page`), { permit: anyPublic, lookup: dns, totalTimeoutMs: 2000 }),
    ).rejects.toThrow("example.test resolves to 127.0.0.1 (loopback)");
  });

  it("refuses a lookalike name that resolves to the listed address", async () => {
    const dns = fakeDns("127.0.0.1");
    const url = new URL(`http://127.0.0.1.evil.test:${port}/page`);
    // Listing 127.0.0.1 does not list the name...
    await expect(
      safeFetch(url, { permit: permitFor({ allowed_web_domains: ["127.0.0.1"] }), lookup: dns }),
    ).rejects.toThrow("allowed_web_domains does not list 127.0.0.1.evil.test");
    expect(dns.calls).toHaveLength(0);
    // ...and when `*` lets the name through, its address is refused.
    await expect(
      safeFetch(url, { permit: permitFor({ allowed_web_domains: ["127.0.0.1", "*"] }), lookup: dns }),
    ).rejects.toThrow("127.0.0.1.evil.test resolves to 127.0.0.1 (loopback); refused (SSRF protection)");
    expect(seen).toHaveLength(0);
  });

  it("re-checks a redirect target's addresses", async () => {
    const dns = fakeDns("169.254.169.254");
    const url = new URL(`${origin}/redirect?to=${encodeURIComponent("http://metadata.test/latest")}`);
    await expect(
      safeFetch(url, { permit: permitFor({ allowed_web_domains: ["127.0.0.1", "*"] }), lookup: dns }),
    ).rejects.toThrow("metadata.test resolves to 169.254.169.254 (link-local)");
    expect(dns.calls).toEqual(["metadata.test"]);
  });

  it("lets a listed localhost resolve to loopback only", async () => {
    const permit = permitFor({ allowed_web_domains: ["localhost"] });
    const url = new URL(`http://localhost:${port}/who`);
    const res = await safeFetch(url, { permit, lookup: fakeDns("127.0.0.1") });
    expect(res.body.toString()).toBe("server A (127.0.0.1)");
    await expect(safeFetch(url, { permit, lookup: fakeDns("10.0.0.7") })).rejects.toThrow(
      "localhost resolves to 10.0.0.7 (private); refused (SSRF protection)",
    );
  });

  it.skipIf(process.platform !== "linux")("connects to the checked address only (no second DNS lookup)", async () => {
    if (!shadow) return;
    // The system resolver says localhost is 127.0.0.1 (server A); the checked answer says 127.0.0.2 (server B).
    // A client that resolved again at connect time would reach A.
    const dns = fakeDns("127.0.0.2");
    const res = await safeFetch(new URL(`http://localhost:${port}/who`), {
      permit: permitFor({ allowed_web_domains: ["localhost"] }),
      lookup: dns,
    });
    expect(res.body.toString()).toBe("server B (127.0.0.2)");
    expect(dns.calls).toEqual(["localhost"]);
  });
});

describe("safeFetch: caps", () => {
  const permit = permitFor({ allowed_web_domains: ["127.0.0.1"] });

  it("stops reading at maxBytes", async () => {
    const res = await safeFetch(new URL(`${origin}/big`), { permit, maxBytes: 1000 });
    expect(res.truncated).toBe(true);
    expect(res.body.length).toBe(1000);
  });

  it("aborts a slow drip at the total time cap", async () => {
    const started = Date.now();
    await expect(safeFetch(new URL(`${origin}/drip`), { permit, totalTimeoutMs: 300 })).rejects.toThrow(
      new ToolFailure("timed out after 300 ms (the limit for one fetch)"),
    );
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("gives up on a server that goes quiet, before or during the body", async () => {
    await expect(safeFetch(new URL(`${origin}/hang`), { permit, idleTimeoutMs: 200 })).rejects.toThrow(
      /nothing for 200 ms/,
    );
    await expect(safeFetch(new URL(`${origin}/stall`), { permit, idleTimeoutMs: 200 })).rejects.toThrow(
      /nothing for 200 ms/,
    );
  });

  it("does not count time spent waiting for a permit", async () => {
    const slowPermit = async (url: URL) => {
      await new Promise((resolve) => setTimeout(resolve, 300));
      await permit(url);
    };
    const res = await safeFetch(new URL(`${origin}/page`), { permit: slowPermit, totalTimeoutMs: 200 });
    expect(res.status).toBe(200);
  });

  it("honours the caller's signal", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("stop")), 100);
    await expect(safeFetch(new URL(`${origin}/drip`), { permit, signal: controller.signal })).rejects.toThrow("stop");
  });
});

describe("htmlToText", () => {
  it("keeps the title, drops head, scripts, styles, templates and SVG", () => {
    const page = htmlToText(
      `<html><head><title> A  title </title><meta charset="utf-8"><style>x{}</style></head><body>
       <template>TPL</template><svg><title>SVG-TITLE</title><text>SVG</text></svg><p>Body</p></body></html>`,
    );
    expect(page.title).toBe("A title");
    expect(page.text).toBe("Body");
  });

  it("reads a script's content as raw text up to its own end tag", () => {
    expect(htmlToText(`<p>a</p><script>if (x < 1) document.write("<p>HIDDEN</p>")</script><p>b</p>`).text).toBe(
      "a\n\nb",
    );
  });

  // Markdown since the reader view: links as [text](url), numbered lists, pipe tables and fenced code.
  it("resolves links against the page and lays out blocks, lists and tables", () => {
    const { text } = htmlToText(
      `<h2>Head</h2><p>See <a href="../x">there</a>, <a href="#top">top</a>, <a href="javascript:alert(1)">js</a>.</p>
       <ol><li>one<ul><li>deep</li></ul></li></ol>line<br>break<table><tr><td>a</td><td>b</td></tr></table>
       <pre>  kept
    spaces</pre>`,
      "https://site.test/dir/page.html",
    );
    expect(text).toBe(
      "## Head\n\nSee [there](https://site.test/x), top, js.\n\n1. one\n   - deep\n\nline\nbreak\n\n| a | b |\n| --- | --- |\n\n```\n  kept\n    spaces\n```",
    );
  });

  it("decodes named, decimal and hex entities and leaves unknown ones", () => {
    expect(htmlToText("<p>&amp; &lt;b&gt; &quot;q&quot; &#39;s&#39; &#x263A; &#65; &copy &bogus; &#0;</p>").text).toBe(
      "& <b> \"q\" 's' ☺ A © &bogus; \ufffd",
    );
    expect(htmlToText("<p>a &nbsp;&nbsp; b &lt;tag&gt;</p>").text).toBe("a b <tag>");
  });

  it("stays linear on hostile markup", () => {
    const hostile = [
      "<a ".repeat(200_000),
      "<".repeat(500_000),
      "&#".repeat(250_000),
      `<p title='${"<".repeat(200_000)}`,
      `<script>${"</scrip".repeat(100_000)}`,
      "<!-".repeat(200_000),
      "<div>".repeat(100_000),
    ];
    const started = Date.now();
    for (const html of hostile) htmlToText(html);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("stays fast on markup that makes markdown writers or parsers superlinear", () => {
    const hostile = [
      `<ul><li>a${"<br>".repeat(200_000)}x</li></ul>`, // line breaks re-read per item
      `<table>${"<tr><td>x".repeat(100_000)}`, // padded columns
      "<a href='/x'>y</a>".repeat(100_000), // output re-read per append
      `<pre>a${"\n ".repeat(500_000)}</pre>`,
      `<p>${"x ".repeat(1_000_000)}</p>`, // past the text budget
    ];
    const started = Date.now();
    for (const html of hostile) htmlToText(html, "https://site.test/");
    expect(Date.now() - started).toBeLessThan(3000);
    // The text budget is said, not silently applied.
    expect(htmlToText(hostile[4]!).text).toMatch(/\[\.\.\. the page goes on: the reader stops after 100000 characters/);
  });

  it("does not parse a page nested deeper than any browser keeps, and says so", () => {
    const started = Date.now();
    const page = htmlToText(`${"<b>".repeat(400_000)}x`);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(page.text).toBe("[the page nests its elements 400000 deep (a browser stops at 512), so it is not read]");
    // Deep but within bounds: read, with its nesting flattened past 256.
    expect(htmlToText(`${"<div>".repeat(3_000)}deep text`).text).toBe("deep text");
  });
});
