#!/usr/bin/env node
// Module contracts and document references (a step of `npm run check`):
// - every domain folder (each folder under packages/<name>/src/, or the package itself when src/ has none) has a
//   README.md with the sections Owns, Use when, Invariants and Tests; any other README under src/ has them too;
// - every relative markdown link (and its #anchor) and every `docs/...` or `README.md` path named in a markdown
//   file or a code comment exists;
// - nothing cites documents outside the repository (the product's specification and design notes, or a path
//   above it): readers of this repository only have docs/ and the READMEs.
// Usage: node scripts/checkDocs.mjs [root] (default: this repository). Exit 1 with one line per problem.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, extname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const ts = createRequire(import.meta.url)("typescript");

export const SECTIONS = ["Owns", "Use when", "Invariants", "Tests"];
const SKIP_DIRS = new Set(["node_modules", "dist", "toolchain", "coverage"]);
const CODE = new Set([".ts", ".mts", ".cts", ".js", ".mjs", ".cjs"]);
const OUTSIDE = /\b(?:SPEC|DESIGN)(?:\.md)?\b|\.\.\/shared\b/g;
const DOC_PATH = /(?<![\w./-])(?:[\w.-]+\/)*(?:docs\/[\w./-]*[\w-]|README\.md)(?:#[\w-]+)?/g;
const MD_LINK = /\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g;

function walk(dir, files = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith(".") || SKIP_DIRS.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path, files);
    else if (entry.isFile()) files.push(path);
  }
  return files;
}

const subdirs = (dir) =>
  existsSync(dir)
    ? readdirSync(dir, { withFileTypes: true })
        .filter((e) => e.isDirectory() && !e.name.startsWith("."))
        .map((e) => join(dir, e.name))
    : [];

/** Domain folders: each folder under packages/<name>/src/, or the package when its src/ has no folders. */
export function domainFolders(root) {
  return subdirs(join(root, "packages")).flatMap((pkg) => {
    const domains = subdirs(join(pkg, "src"));
    return domains.length > 0 ? domains : [pkg];
  });
}

/** GitHub's heading anchors of a markdown text (duplicates get -1, -2...). */
function anchorsOf(markdown) {
  const seen = new Map();
  const anchors = new Set();
  for (const { text } of lines(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (!heading) continue;
    const slug = heading[1]
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

/** Lines of a markdown text outside fenced code blocks, with their numbers. */
function lines(markdown) {
  const out = [];
  let fenced = false;
  markdown.split("\n").forEach((text, i) => {
    if (/^\s*(```|~~~)/.test(text)) fenced = !fenced;
    else if (!fenced) out.push({ text, line: i + 1 });
  });
  return out;
}

/** Comments of a code file with the line each starts on. */
function comments(file, text) {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  const found = new Map();
  const visit = (node) => {
    const at = node.getFullStart();
    // Comments on the previous token's line are "trailing", the ones after a line break "leading".
    for (const range of [
      ...(ts.getTrailingCommentRanges(text, at) ?? []),
      ...(ts.getLeadingCommentRanges(text, at) ?? []),
    ]) {
      found.set(range.pos, text.slice(range.pos, range.end));
    }
    for (const child of node.getChildren(source)) visit(child);
  };
  visit(source);
  return [...found].map(([pos, comment]) => ({
    text: comment,
    line: source.getLineAndCharacterOfPosition(pos).line + 1,
  }));
}

/** Whether a path named in prose exists relative to the file's folder or any folder above it up to the root. */
function namedPathExists(root, fromDir, path) {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    if (existsSync(join(dir, path))) return true;
    if (dir === root || dirname(dir) === dir) return false;
  }
}

export function checkDocs(root) {
  const problems = [];
  const rel = (path) => relative(root, path).split(sep).join("/") || ".";
  const anchorCache = new Map();
  const anchors = (file) => {
    if (!anchorCache.has(file)) anchorCache.set(file, anchorsOf(readFileSync(file, "utf8")));
    return anchorCache.get(file);
  };

  for (const folder of domainFolders(root)) {
    if (!existsSync(join(folder, "README.md"))) {
      problems.push(
        `${rel(folder)}: no README.md. Every domain folder has one with the sections ${SECTIONS.map((s) => `"## ${s}"`).join(", ")}`,
      );
    }
  }

  const files = walk(root);
  for (const file of files) {
    const ext = extname(file);
    const isMarkdown = ext === ".md";
    if (!isMarkdown && !CODE.has(ext)) continue;
    const text = readFileSync(file, "utf8");
    const where = (line) => `${rel(file)}:${line}`;
    const chunks = isMarkdown ? lines(text) : comments(file, text);

    if (isMarkdown && file.endsWith(`${sep}README.md`) && rel(file).split("/").includes("src")) {
      const headings = new Set(lines(text).flatMap(({ text: t }) => /^##\s+(.+?)\s*$/.exec(t)?.[1] ?? []));
      const missing = SECTIONS.filter((s) => !headings.has(s));
      if (missing.length > 0) {
        problems.push(`${rel(file)}: missing section(s) ${missing.map((s) => `"## ${s}"`).join(", ")}`);
      }
    }

    for (const chunk of chunks) {
      const firstLine = chunk.line;
      const lineOf = (index) => firstLine + chunk.text.slice(0, index).split("\n").length - 1;
      for (const match of chunk.text.matchAll(OUTSIDE)) {
        problems.push(
          `${where(lineOf(match.index))}: cites ${match[0]}, a document outside this repository; cite the docs/ page or README that covers it, or drop the citation`,
        );
      }
      if (isMarkdown) {
        for (const match of chunk.text.matchAll(MD_LINK)) {
          const target = match[1];
          if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
          const [path, anchor] = target.split("#");
          const resolved = path ? resolve(dirname(file), decodeURI(path)) : file;
          if (!existsSync(resolved)) {
            problems.push(`${where(lineOf(match.index))}: link to ${target}: ${rel(resolved)} does not exist`);
          } else if (anchor && resolved.endsWith(".md") && !anchors(resolved).has(anchor)) {
            problems.push(
              `${where(lineOf(match.index))}: link to ${target}: ${rel(resolved)} has no heading #${anchor}`,
            );
          }
        }
      }
      for (const match of chunk.text.matchAll(DOC_PATH)) {
        const [path, anchor] = match[0].replace(/\.+$/, "").split("#");
        if (!namedPathExists(root, dirname(file), path)) {
          problems.push(`${where(lineOf(match.index))}: names ${path}, which does not exist`);
          continue;
        }
        const target = [dirname(file), root].map((d) => join(d, path)).find((p) => existsSync(p));
        if (anchor && target?.endsWith(".md") && statSync(target).isFile() && !anchors(target).has(anchor)) {
          problems.push(`${where(lineOf(match.index))}: names ${path}#${anchor}, but ${path} has no such heading`);
        }
      }
    }
  }
  return problems;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), ".."));
  const problems = checkDocs(root);
  for (const problem of problems) console.error(problem);
  if (problems.length > 0) {
    console.error(`checkDocs: ${problems.length} problem(s) in module READMEs and document references`);
    process.exit(1);
  }
}
