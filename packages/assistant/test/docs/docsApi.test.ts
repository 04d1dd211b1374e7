import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DocsLibrary, firstHeading, MAX_DOC_BYTES, packageDocsDir } from "../../src/docs/library.ts";
import { api, raw, startDaemon, type TestDaemon } from "../helpers/daemon.ts";

// GET /api/docs and GET /api/docs/<path> over real HTTP: the daemon started from a folder holding docs/ (and an
// ASSISTANT_SPEC_DIR) lists its Markdown files with titles, searches them and serves one; anything outside those
// folders (traversal, absolute paths, symlinks leading out, files that are not .md) is refused.

let daemon: TestDaemon;
let work: string;
let outside: string;
const doc = (path: string, token?: string | null) =>
  api(daemon, "GET", `/api/docs/${encodeURIComponent(path)}`, undefined, token === undefined ? daemon.token : token);

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "assistant-docs-"));
  outside = mkdtempSync(join(tmpdir(), "assistant-outside-"));
  writeFileSync(join(outside, "secret.md"), "# Secret\nnot for the Doc tab\n");
  const docs = join(work, "docs");
  mkdirSync(join(docs, "guides"), { recursive: true });
  mkdirSync(join(docs, ".hidden"));
  writeFileSync(join(docs, "index.md"), "Intro without heading\n\nSee [the guide](guides/setup.md).\n");
  writeFileSync(
    join(docs, "guides", "setup.md"),
    "```\n# not a title\n```\n# Setting up\n\nInstall the kettle. The kettle boils.\n",
  );
  writeFileSync(join(docs, "notes.txt"), "# Not markdown\n");
  writeFileSync(join(docs, ".hidden", "h.md"), "# Hidden\n");
  writeFileSync(join(docs, "big.md"), `# Big\n${"x".repeat(MAX_DOC_BYTES)}\n`);
  symlinkSync(join(outside, "secret.md"), join(docs, "escape.md"));
  symlinkSync(outside, join(docs, "outdir"));
  symlinkSync(join(docs, "notes.txt"), join(docs, "renamed.md"));
  const spec = join(work, "spec");
  mkdirSync(spec);
  writeFileSync(join(spec, "api.md"), "# API spec\n\nThe kettle API.\n");
  daemon = await startDaemon({ ASSISTANT_SPEC_DIR: spec }, undefined, { cwd: work });
}, 30_000);

afterAll(async () => {
  await daemon?.stop();
});

describe("GET /api/docs", () => {
  it("lists the .md files of docs/ and the spec folder with their titles", async () => {
    const answer = await api(daemon, "GET", "/api/docs");
    expect(answer.status).toBe(200);
    const body = answer.json();
    expect(body.working_directory).toBe(work);
    expect(body.folders).toEqual([
      { source: "docs", dir: join(work, "docs") },
      { source: "spec", dir: join(work, "spec") },
    ]);
    expect(body.items.map((item: { path: string; title: string }) => [item.path, item.title])).toEqual([
      ["big.md", "Big"],
      ["guides/setup.md", "Setting up"],
      ["index.md", "index"],
      ["@spec/api.md", "API spec"],
    ]);
  });

  it("searches: files holding every word, most matches first, with the line of the first match", async () => {
    const body = (await api(daemon, "GET", "/api/docs?q=KETTLE")).json();
    expect(body.items.map((item: { path: string }) => item.path)).toEqual(["guides/setup.md", "@spec/api.md"]);
    expect(body.items[0]).toMatchObject({ matches: 2, excerpt: "Install the kettle. The kettle boils." });
    expect((await api(daemon, "GET", "/api/docs?q=kettle%20boils")).json().items).toHaveLength(1);
    expect((await api(daemon, "GET", "/api/docs?q=teapot")).json().items).toEqual([]);
  });

  it("refuses an over-long query and a missing token", async () => {
    const long = await api(daemon, "GET", `/api/docs?q=${"a".repeat(201)}`);
    expect(long.status).toBe(400);
    expect(long.json().error.details.field).toBe("query.q");
    expect((await api(daemon, "GET", "/api/docs", undefined, null)).status).toBe(401);
  });
});

describe("GET /api/docs/<path>", () => {
  it("answers the Markdown of a listed file, nested and spec ones too", async () => {
    const answer = await doc("guides/setup.md");
    expect(answer.status).toBe(200);
    expect(answer.headers["content-type"]).toBe("text/markdown; charset=utf-8");
    expect(answer.body).toContain("Install the kettle.");
    expect((await doc("@spec/api.md")).body).toContain("The kettle API.");
    // A client that does not encode the slash reaches no route: the path is one URL segment.
    expect((await api(daemon, "GET", "/api/docs/guides/setup.md")).status).toBe(404);
  });

  it("refuses traversal, absolute paths and files that are not Markdown before reading anything", async () => {
    for (const path of [
      "../secret.md",
      "guides/../../x.md",
      "/etc/passwd.md",
      "guides//setup.md",
      "notes.txt",
      "a\\b.md",
    ]) {
      const answer = await doc(path);
      expect(answer.status, path).toBe(400);
      expect(answer.json().error).toMatchObject({ code: "invalid_request", details: { field: "params.path" } });
    }
    // Traversal written with %2E%2E or raw dots in the URL is refused too.
    expect((await api(daemon, "GET", "/api/docs/..%2F..%2Fsecret.md")).status).toBe(400);
  });

  it("refuses symlinks that lead out of the folder or to a file that is not .md", async () => {
    for (const path of ["escape.md", "outdir/secret.md", "renamed.md"]) {
      const answer = await doc(path);
      expect(answer.status, path).toBe(403);
      expect(answer.body).not.toContain("not for the Doc tab");
    }
  });

  it("answers 404 for a missing file, 413 over the size limit, 401 without a token", async () => {
    expect((await doc("missing.md")).json().error.code).toBe("not_found");
    expect((await doc(".hidden/h.md")).status).toBe(400);
    const big = await doc("big.md");
    expect(big.status).toBe(413);
    expect(big.json().error.message).toMatch(/over the 1048576-byte limit/);
    expect((await doc("index.md", null)).status).toBe(401);
    expect((await raw(`${daemon.url}/api/docs/index.md`)).status).toBe(401);
  });
});

describe("DocsLibrary", () => {
  it("falls back to the package's docs, and without any says how to get them", async () => {
    const empty = mkdtempSync(join(tmpdir(), "assistant-nodocs-"));
    const repoDocs = packageDocsDir();
    expect(repoDocs).toMatch(/[\\/]docs$/);
    const fallback = await new DocsLibrary({ cwd: empty, packageDocs: repoDocs }).list();
    expect(fallback.items.some((item) => item.path === "http-api.md")).toBe(true);
    const none = new DocsLibrary({ cwd: empty });
    expect((await none.list()).items).toEqual([]);
    await expect(none.read("index.md")).rejects.toThrow("start the daemon from the folder that holds docs/");
  });

  it("finds the package from the bundle or the sources", () => {
    expect(packageDocsDir(join(packageDocsDir()!, "..", "packages", "assistant", "dist", "chunks"))).toBe(
      packageDocsDir(),
    );
    expect(firstHeading("~~~\n# code\n~~~\n## Sub\n# Title #\n")).toBe("Title");
  });
});
