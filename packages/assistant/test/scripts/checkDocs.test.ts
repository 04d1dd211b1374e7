import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

// scripts/checkDocs.mjs, the `npm run check` step that keeps module READMEs and document references honest, run
// as `npm run check` runs it, against small trees made here.

const script = resolve(import.meta.dirname, "..", "..", "..", "..", "scripts", "checkDocs.mjs");
const README = "# x/\n\n## Owns\n\nx\n\n## Use when\n\nx\n\n## Invariants\n\nx\n\n## Tests\n\nx\n";

let root: string;
afterEach(() => rmSync(root, { recursive: true, force: true }));

function tree(files: Record<string, string>): string {
  root = mkdtempSync(join(tmpdir(), "assistant-checkdocs-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

function check(dir: string) {
  const run = spawnSync(process.execPath, [script, dir], { encoding: "utf8" });
  return { code: run.status, problems: run.stderr.trim().split("\n").filter(Boolean) };
}

/** A tree that passes: two domain folders with their READMEs, a client package, docs cited by path and link. */
const clean = {
  "docs/guide.md": "# Guide\n\n## Set up\n\ntext\n",
  "README.md": "See [the guide](docs/guide.md#set-up) and `packages/app/src/store/README.md`.\n",
  "packages/app/src/store/README.md": README,
  "packages/app/src/store/db.ts":
    '// The file format is in docs/guide.md#set-up.\nexport const where = "docs/not-a-comment.md";\n',
  "packages/app/src/web/README.md": `${README}\nSee [the store](../store/README.md).\n`,
  "packages/app/src/web/app.ts": "/** Conventions: ../store/README.md */\nexport const x = 1;\n",
  "packages/client/README.md": README,
  "packages/client/src/index.ts": "export {};\n",
};

describe("checkDocs", () => {
  it("passes a tree whose folders have their READMEs and whose references resolve", () => {
    expect(check(tree(clean))).toEqual({ code: 0, problems: [] });
  });

  it("fails on a domain folder without README.md, naming the folder and the sections it needs", () => {
    const { code, problems } = check(tree({ ...clean, "packages/app/src/jobs/run.ts": "export {};\n" }));
    expect(code).toBe(1);
    expect(problems).toEqual([
      'packages/app/src/jobs: no README.md. Every domain folder has one with the sections "## Owns", "## Use when", "## Invariants", "## Tests"',
      "checkDocs: 1 problem(s) in module READMEs and document references",
    ]);
  });

  it("fails on a README missing one of the four sections, and on a client package without one", () => {
    const { "packages/client/README.md": _, ...withoutClient } = clean;
    const partial = README.replace("## Tests", "## Testing");
    const { code, problems } = check(tree({ ...withoutClient, "packages/app/src/web/README.md": partial }));
    expect(code).toBe(1);
    expect(problems).toContain('packages/app/src/web/README.md: missing section(s) "## Tests"');
    expect(problems).toContain(
      'packages/client: no README.md. Every domain folder has one with the sections "## Owns", "## Use when", "## Invariants", "## Tests"',
    );
  });

  it("fails on dangling references: a comment's docs/ path, a link, an anchor, a README path", () => {
    const { code, problems } = check(
      tree({
        ...clean,
        "packages/app/src/store/db.ts": "export const a = 1;\n// Record shapes: docs/records.md\n",
        "packages/app/src/web/app.ts": "/**\n * Routes (see http/README.md).\n */\nexport const x = 1;\n",
        "docs/guide.md": "# Guide\n\n## Set up\n\n[gone](missing.md), [anchor](guide.md#install), [ok](#set-up)\n",
      }),
    );
    expect(code).toBe(1);
    expect(problems.slice(0, -1).sort()).toEqual([
      "docs/guide.md:5: link to guide.md#install: docs/guide.md has no heading #install",
      "docs/guide.md:5: link to missing.md: docs/missing.md does not exist",
      "packages/app/src/store/db.ts:2: names docs/records.md, which does not exist",
      "packages/app/src/web/app.ts:2: names http/README.md, which does not exist",
    ]);
  });

  it("fails on any citation of the specification, the design notes or ../shared, in comments and markdown", () => {
    const { code, problems } = check(
      tree({
        ...clean,
        "packages/app/src/store/db.ts": '// Rows (DESIGN.md section 6).\nexport const a = 1; // SPEC "Limits"\n',
        "docs/guide.md": "# Guide\n\n## Set up\n\nAs ../shared/SPEC.md says.\n",
      }),
    );
    expect(code).toBe(1);
    const outside =
      ", a document outside this repository; cite the docs/ page or README that covers it, or drop the citation";
    expect(problems.slice(0, -1).sort()).toEqual([
      `docs/guide.md:5: cites ../shared${outside}`,
      `docs/guide.md:5: cites SPEC.md${outside}`,
      `packages/app/src/store/db.ts:1: cites DESIGN.md${outside}`,
      `packages/app/src/store/db.ts:2: cites SPEC${outside}`,
    ]);
  });
});
