import { existsSync, statSync } from "node:fs";
import { open, readdir, readFile, realpath, stat } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, sep } from "node:path";
import { AppError } from "../util/errors.ts";

// The Markdown documentation the daemon serves to the web UI's Doc tab: the `docs/` folder of the daemon's working
// directory, else the docs of the installed package; plus ASSISTANT_SPEC_DIR when set, its files under `@spec/`.
// Only `.md` files inside those folders are ever read: a path is checked as text first (no absolute path, no `..`,
// no backslash), then by its real path (a symlink leading out of the folder, or to a file not ending in `.md`, is
// refused).

/** Larger files are listed but not served (413), and left out of search. */
export const MAX_DOC_BYTES = 1024 * 1024;
/** Paths in the spec folder (ASSISTANT_SPEC_DIR) start with this, so they never clash with a path of docs/. */
export const SPEC_PREFIX = "@spec/";
const MAX_FILES = 2_000;
const MAX_DEPTH = 8;
const MAX_PATH_CHARS = 512;
const TITLE_BYTES = 8 * 1024;
const EXCERPT_CHARS = 160;

export type DocSource = "docs" | "spec";

export interface DocFolder {
  source: DocSource;
  dir: string;
}

export interface DocItem {
  /** Relative to its folder with `/`, the spec folder's under `@spec/`. */
  path: string;
  /** The first `#` heading, else the file name without `.md`. */
  title: string;
  source: DocSource;
  bytes: number;
  /** With a search: how many times the words occur (title and path count too). */
  matches?: number;
  /** With a search: the line of the first occurrence, cut to about 160 characters. */
  excerpt?: string;
}

export interface DocsList {
  /** The daemon's working directory, where `docs/` is looked for first. */
  working_directory: string;
  folders: DocFolder[];
  items: DocItem[];
}

export interface DocsOptions {
  cwd: string;
  /** ASSISTANT_SPEC_DIR. */
  specDir?: string | undefined;
  /** The installed package's docs, used when the working directory has none. */
  packageDocs?: string | undefined;
}

/**
 * The docs folder of the package this code belongs to: `packages/assistant` is found from the bundle (`dist/`,
 * `dist/chunks/`) or the sources (`src/docs/`); its own `docs/`, else the repository's (`packages/assistant/../../docs`).
 */
export function packageDocsDir(codeDir: string = import.meta.dirname): string | undefined {
  const bundle = /^(.*)[\\/]dist(?:[\\/]chunks)?$/.exec(codeDir);
  const pkg = bundle ? bundle[1]! : join(codeDir, "..", "..");
  const candidates = [join(pkg, "docs")];
  if (basename(dirname(pkg)) === "packages") candidates.push(join(pkg, "..", "..", "docs"));
  return candidates.find(isDirectory);
}

export class DocsLibrary {
  readonly #options: DocsOptions;

  constructor(options: DocsOptions) {
    this.#options = options;
  }

  /** The folders served now (looked up on each call: a docs/ folder created later is found). */
  folders(): DocFolder[] {
    const local = join(this.#options.cwd, "docs");
    const docs = isDirectory(local) ? local : this.#options.packageDocs;
    const folders: DocFolder[] = [];
    if (docs && isDirectory(docs)) folders.push({ source: "docs", dir: docs });
    const spec = this.#options.specDir;
    if (spec && isDirectory(spec)) folders.push({ source: "spec", dir: spec });
    return folders;
  }

  /** Every `.md` file with its title; with `q`, only the files holding every word of it, most matches first. */
  async list(q?: string): Promise<DocsList> {
    const folders = this.folders();
    const items: DocItem[] = [];
    for (const folder of folders) {
      const root = await realpath(folder.dir);
      for (const file of await markdownFiles(root)) {
        if (items.length >= MAX_FILES) break;
        const path = (folder.source === "spec" ? SPEC_PREFIX : "") + file.rel;
        items.push({ path, title: await titleOf(file.abs, file.rel), source: folder.source, bytes: file.bytes });
      }
    }
    const words = searchWords(q);
    const found = words.length === 0 ? items : await search(items, words, (path) => this.#locate(path, folders));
    return { working_directory: this.#options.cwd, folders, items: found };
  }

  /** The Markdown of one file, by its path in the list. */
  async read(path: string): Promise<string> {
    const file = await this.#locate(path, this.folders());
    const size = (await stat(file)).size;
    if (size > MAX_DOC_BYTES) {
      throw new AppError(
        "payload_too_large",
        `${path} is ${size} bytes, over the ${MAX_DOC_BYTES}-byte limit of a doc`,
      );
    }
    return readFile(file, "utf8");
  }

  /** The real path of a listed file; refuses anything that is not a `.md` file inside its folder. */
  async #locate(path: string, folders: DocFolder[]): Promise<string> {
    checkDocPath(path);
    const spec = path.startsWith(SPEC_PREFIX);
    const folder = folders.find((f) => f.source === (spec ? "spec" : "docs"));
    if (!folder) {
      throw new AppError(
        "not_found",
        spec
          ? "no spec folder: ASSISTANT_SPEC_DIR is not set"
          : "no docs folder: start the daemon from the folder that holds docs/",
      );
    }
    const rel = spec ? path.slice(SPEC_PREFIX.length) : path;
    const root = await realpath(folder.dir);
    let real: string;
    try {
      real = await realpath(join(root, ...rel.split("/")));
    } catch {
      throw new AppError("not_found", `no doc ${path}`);
    }
    if (!inside(root, real) || !/\.md$/i.test(real)) {
      throw new AppError("forbidden", `${path} leads outside the docs folder`, { field: "params.path" });
    }
    if (!(await stat(real)).isFile()) throw new AppError("not_found", `no doc ${path}`);
    return real;
  }
}

/** Refuses, before touching the disk, a path that is not a relative `.md` path without `..` or hidden segments. */
export function checkDocPath(path: string): void {
  const refuse = (why: string) => {
    throw new AppError("invalid_request", `path: ${why}`, { field: "params.path" });
  };
  if (path.length === 0 || path.length > MAX_PATH_CHARS) refuse(`1 to ${MAX_PATH_CHARS} characters`);
  if (path.includes("\0") || path.includes("\\")) refuse("no NUL or backslash");
  if (path.startsWith("/") || isAbsolute(path)) refuse("a path relative to the docs folder, not an absolute one");
  // Hidden entries are not listed either; this also refuses `.` and `..`.
  if (path.split("/").some((segment) => segment === "" || segment.startsWith("."))) {
    refuse("no empty segment and none starting with `.` (no `..`, no hidden file)");
  }
  if (!/\.md$/i.test(path)) refuse("only Markdown files (.md) are served");
}

interface FoundFile {
  abs: string;
  rel: string;
  bytes: number;
}

/** The `.md` files under root (hidden entries and node_modules skipped; symlinks followed only inside root). */
async function markdownFiles(root: string): Promise<FoundFile[]> {
  const found: FoundFile[] = [];
  const walk = async (dir: string, depth: number): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      if (found.length >= MAX_FILES) return;
      if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
      const abs = join(dir, entry.name);
      let real = abs;
      if (entry.isSymbolicLink()) {
        real = await realpath(abs).catch(() => "");
        if (!real || !inside(root, real)) continue;
      }
      const info = await stat(real).catch(() => undefined);
      if (!info) continue;
      if (info.isDirectory()) {
        if (depth < MAX_DEPTH && !entry.isSymbolicLink()) await walk(abs, depth + 1);
      } else if (info.isFile() && /\.md$/i.test(entry.name) && /\.md$/i.test(real)) {
        found.push({ abs: real, rel: relative(root, abs).split(sep).join("/"), bytes: info.size });
      }
    }
  };
  await walk(root, 0);
  return found;
}

/** The first ATX heading of level 1 outside code fences, else the file name. */
async function titleOf(file: string, rel: string): Promise<string> {
  const fallback = basename(rel).replace(/\.md$/i, "");
  const handle = await open(file, "r").catch(() => undefined);
  if (!handle) return fallback;
  try {
    const buffer = Buffer.alloc(TITLE_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, TITLE_BYTES, 0);
    return firstHeading(buffer.subarray(0, bytesRead).toString("utf8")) ?? fallback;
  } finally {
    await handle.close();
  }
}

export function firstHeading(text: string): string | undefined {
  let fenced = false;
  for (const line of text.split("\n")) {
    if (/^\s{0,3}(```|~~~)/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^ {0,3}#\s+(.+?)\s*#*\s*$/.exec(line);
    if (heading) return heading[1];
  }
  return undefined;
}

function searchWords(q: string | undefined): string[] {
  return (q ?? "")
    .toLowerCase()
    .split(/\s+/)
    .filter((word) => word.length > 0);
}

/** Files holding every word (in their text, title or path), by matches; each with the line of its first match. */
async function search(
  items: DocItem[],
  words: string[],
  locate: (path: string) => Promise<string>,
): Promise<DocItem[]> {
  const hits: DocItem[] = [];
  for (const item of items) {
    if (item.bytes > MAX_DOC_BYTES) continue;
    const text = await readFile(await locate(item.path), "utf8").catch(() => "");
    const haystack = `${item.title}\n${item.path}\n${text}`.toLowerCase();
    const counts = words.map((word) => occurrences(haystack, word));
    if (counts.some((count) => count === 0)) continue;
    const line = text.split("\n").find((l) => l.toLowerCase().includes(words[0]!)) ?? item.title;
    hits.push({ ...item, matches: counts.reduce((a, b) => a + b, 0), excerpt: excerptOf(line.trim(), words[0]!) });
  }
  return hits.sort((a, b) => b.matches! - a.matches! || a.path.localeCompare(b.path));
}

function occurrences(text: string, word: string): number {
  let count = 0;
  for (let at = text.indexOf(word); at !== -1; at = text.indexOf(word, at + word.length)) count++;
  return count;
}

function excerptOf(line: string, word: string): string {
  if (line.length <= EXCERPT_CHARS) return line;
  const at = Math.max(0, line.toLowerCase().indexOf(word) - 40);
  return `${at > 0 ? "…" : ""}${line.slice(at, at + EXCERPT_CHARS)}…`;
}

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

function isDirectory(path: string): boolean {
  return existsSync(path) && statSync(path).isDirectory();
}
