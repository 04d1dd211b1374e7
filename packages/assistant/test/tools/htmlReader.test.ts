import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { htmlToText } from "../../src/tools/html.ts";

// The HTML reader on saved pages written like real ones (test/tools/fixtures: a news article with a cookie banner,
// menus, ads, related links and a footer; a documentation page with a sidebar, a parameter table and code; a forum
// thread). For each page the reader view must keep every sentence of the content and none of the boilerplate,
// where the whole page (what web_fetch gave before the reader view, and gives with whole_page) has both; tables,
// links, headings and code must survive as markdown; and a page must take milliseconds.

const fixture = (name: string) => readFileSync(join(import.meta.dirname, "fixtures", `${name}.html`), "utf8");

interface Page {
  name: string;
  url: string;
  /** Text the reader must keep. */
  content: string[];
  /** Boilerplate the reader must leave out (and the whole page shows). */
  boilerplate: string[];
}

const PAGES: Page[] = [
  {
    name: "news-article",
    url: "https://www.riverside-courier.example/news/local/cycling-network",
    content: [
      "The city council voted 31 to 18 on Monday evening",
      "## What changes, and when",
      "## How the vote went",
      "- Harbour Road: 6.2 km of two-way protected lanes, finished by June 2026.",
      '> "We are not taking the road away from anyone.',
      "**48 kilometres of protected cycle lanes**",
      "[traffic study](https://www.riverside-courier.example/documents/cycling-network-study.pdf)",
      "[minutes of the meeting](https://council.riverside.example/meetings/2025-04-14/minutes)",
      "Residents can comment on the detailed designs for each section until 30 June",
    ],
    boilerplate: [
      "We use cookies",
      "Subscribe from €1",
      "Huge spring sale on garden furniture",
      "Related stories",
      "Tram extension delayed again",
      "Most read",
      "Late penalty settles the river derby",
      "Holidays in the sun",
      "Get the morning briefing",
      "All rights reserved",
    ],
  },
  {
    name: "docs-page",
    url: "https://docs.tidewater.example/api/helpers/fetch-retry/",
    content: [
      "Fetches a resource like `fetch()`, retrying failed attempts with exponential backoff.",
      "## Parameters",
      "| Name | Type | Default | Description |\n| --- | --- | --- | --- |",
      "| `url` | `string \\| URL` | required | The resource to fetch. |",
      "| `options.retries` | `number` | `3` | How many times a failed attempt is retried; `0` disables retrying. |",
      '```js\nimport { fetchRetry } from "tidewater-http";\n\nconst res = await fetchRetry(',
      "if (res.status < 300) {",
      "[`RetryExhaustedError`](https://docs.tidewater.example/api/errors/#retryexhaustederror)",
      "- [fetchJson()](https://docs.tidewater.example/api/helpers/fetch-json/) parses the body",
    ],
    boilerplate: [
      "Skip to content",
      "Changelog",
      "new Client(options)",
      "streamLines()",
      "Edit this page",
      "Was this page helpful?",
      "On this page",
      "Documentation licensed under CC BY 4.0",
    ],
  },
  {
    name: "forum-thread",
    url: "https://forum.homelab.example/t/sqlite-database-is-locked-with-two-node-processes-writing/4812",
    content: [
      "I run two small Node services on a Raspberry Pi",
      "```\nSqliteError: database is locked\n    at Database.prepare",
      'Set a busy timeout on **both** connections so they queue instead:\n\n```js\nconst db = new Database("readings.db");',
      "[write-ahead log documentation](https://sqlite.example.org/wal.html)",
      "That was it, thank you!",
      "One more tip: keep write transactions short.",
    ],
    boilerplate: [
      "Log in",
      "Sign up",
      "Suggested topics",
      "Postgres on a Pi: worth it?",
      "1.2k views",
      "Powered by ForumSoft",
    ],
  },
];

/** Never in any output: script, style, noscript and JSON-LD text. */
const CODE =
  /gtag|dataLayer|TRACKING-PIXEL-TEXT|font-family|border-collapse|Forum\.start|__DOCS_CONFIG__|@context|Enable JavaScript/;

/** Median milliseconds of `fn` over `runs` runs, after a warm-up. */
function medianMs(fn: () => void, runs = 25): number {
  for (let i = 0; i < 5; i++) fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    fn();
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b)[Math.floor(runs / 2)]!;
}

describe("reader view on saved pages", () => {
  for (const page of PAGES) {
    it(`${page.name}: the article with its structure, none of the boilerplate; the whole page has both`, () => {
      const html = fixture(page.name);
      const reader = htmlToText(html, page.url);
      const whole = htmlToText(html, page.url, { wholePage: true });
      expect(reader.article).toBe(true);
      expect(whole.article).toBe(false);
      for (const text of page.content) {
        expect(reader.text, text).toContain(text);
        expect(whole.text, text).toContain(text);
      }
      for (const text of page.boilerplate) {
        expect(reader.text, text).not.toContain(text);
        expect(whole.text, text).toContain(text);
      }
      expect(reader.text).not.toMatch(CODE);
      expect(whole.text).not.toMatch(CODE);
      expect(reader.text.length).toBeLessThan(whole.text.length * 0.75);
    });
  }

  it("titles and bylines come from the page's metadata (the site name left out)", () => {
    const news = htmlToText(fixture("news-article"), PAGES[0]!.url);
    expect(news.title).toBe("City council approves new cycling network after two-year debate");
    expect(news.byline).toBe("Maria Lindqvist");
    const forum = htmlToText(fixture("forum-thread"), PAGES[2]!.url);
    expect(forum.title).toBe('SQLite "database is locked" with two Node processes writing');
  });

  it("a page that is not an article (a home page of links, a sign-in form) is read whole", () => {
    const home = `<!doctype html><html><head><title>Example Portal</title></head><body>
      <nav><a href="/mail">Mail</a> <a href="/news">News</a> <a href="/weather">Weather</a></nav>
      <h1>Welcome back</h1>
      <form><label>Email <input name="email"></label> <button>Sign in</button></form>
      <ul><li><a href="/news/1">Markets open higher</a></li><li><a href="/news/2">Rain expected tonight</a></li></ul>
      <footer>© Example Portal</footer></body></html>`;
    const page = htmlToText(home, "https://portal.example/");
    expect(page.article).toBe(false);
    expect(page.title).toBe("Example Portal");
    expect(page.text).toBe(
      [
        "[Mail](https://portal.example/mail) [News](https://portal.example/news) [Weather](https://portal.example/weather)",
        "# Welcome back",
        "Email Sign in",
        "- [Markets open higher](https://portal.example/news/1)\n- [Rain expected tonight](https://portal.example/news/2)",
        "© Example Portal",
      ].join("\n\n"),
    );
  });

  it("takes milliseconds per page; a 1 MiB page (inline scripts, a long article) well under a second", () => {
    const rows: string[] = [];
    for (const page of PAGES) {
      const html = fixture(page.name);
      const reader = medianMs(() => htmlToText(html, page.url));
      const whole = medianMs(() => htmlToText(html, page.url, { wholePage: true }));
      rows.push(`${page.name}: reader ${reader.toFixed(2)} ms, whole page ${whole.toFixed(2)} ms`);
      expect(reader).toBeLessThan(50);
    }
    const paragraph = `<p>${"The council will publish the detailed designs for each district in the spring. ".repeat(6)}</p>\n`;
    const big = fixture("news-article")
      .replace('<div class="article-body">', `<div class="article-body">${paragraph.repeat(1200)}`)
      .replace("</head>", `<script>${"var x = 1;".repeat(50_000)}</script></head>`);
    expect(big.length).toBeGreaterThan(1024 * 1024);
    const started = performance.now();
    const page = htmlToText(big, PAGES[0]!.url);
    const bigMs = performance.now() - started;
    rows.push(`news-article at ${(big.length / 1024 / 1024).toFixed(1)} MiB: reader ${bigMs.toFixed(0)} ms`);
    expect(page.article).toBe(true);
    expect(page.text).toContain("the reader stops after 100000 characters of text");
    expect(bigMs).toBeLessThan(1000);
    console.info(`HTML reader timings (median of 25):\n  ${rows.join("\n  ")}`);
  });
});
