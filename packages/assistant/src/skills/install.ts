import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { z } from "zod";
import { AppError } from "../util/errors.ts";
import { type InstallSource, installSource } from "./codeHosts.ts";
import { loadSkill } from "./registry.ts";
import { MAX_SKILL_MD_BYTES, parseSkillMd, SkillInvalid } from "./skillFile.ts";

// Downloads a skill into data_dir/skills/<name>/ (docs/skills.md#installing: host restricted). The
// fetch it is given enforces the host rules (allowed_skill_install_hosts, HTTPS, SSRF checks, every redirect
// re-permitted); this module decides what to fetch and refuses anything that could escape the folder: entry
// names are checked segment by segment, symlinks and submodules are refused, nothing is written executable
// (scripts are for review first), and the files land in a hidden temp folder that is renamed into place only
// once the whole skill has been read and validated.

export const MAX_SKILL_FILES = 100;
export const MAX_SKILL_FILE_BYTES = 1024 * 1024;
export const MAX_SKILL_TOTAL_BYTES = 10 * 1024 * 1024;
const MAX_TREE_BYTES = 2 * 1024 * 1024;
const MAX_DEPTH = 8;

export interface FetchedFile {
  status: number;
  body: Buffer;
  truncated: boolean;
}

/** GETs a URL under the install rules; a refused host throws (ToolDenied). */
export type InstallFetch = (url: URL, options: { accept: string; maxBytes: number }) => Promise<FetchedFile>;

export const installedSkillSchema = z
  .object({
    name: z.string(),
    path: z.string(),
    /** The URL installed from. */
    source: z.string(),
    files: z.array(z.string()),
    /** Files the source marked executable: written without the bit, to be reviewed before `chmod +x`. */
    not_executable: z.array(z.string()),
    /** Commands the skill declares (`allowed-tools: Bash(...)`). */
    commands: z.array(z.string()),
    replaced: z.boolean(),
  })
  .meta({ id: "InstalledSkill" });

export type InstalledSkill = z.infer<typeof installedSkillSchema>;

interface RemoteEntry {
  path: string;
  executable: boolean;
  url: URL;
  size: number | null;
}

/** Fetches, checks and writes one skill. `replace` allows overwriting an installed skill of the same name. */
export async function installSkill(
  rawUrl: string,
  options: { skillsDir: string; enterpriseHosts: readonly string[]; fetch: InstallFetch; replace?: boolean },
): Promise<InstalledSkill> {
  let source: InstallSource;
  try {
    source = installSource(rawUrl, options.enterpriseHosts);
  } catch (error) {
    throw new AppError("invalid_request", (error as Error).message, { field: "url" });
  }
  const entries = source.kind === "file" ? [fileEntry(source.url)] : await githubEntries(source, options.fetch);
  if (!entries.some((e) => e.path === "SKILL.md")) {
    throw new AppError("invalid_request", `no SKILL.md at ${describe(source)}`);
  }
  const files = new Map<string, Buffer>();
  let total = 0;
  for (const entry of entries) {
    const isSkillMd = entry.path === "SKILL.md";
    const limit = isSkillMd ? MAX_SKILL_MD_BYTES : MAX_SKILL_FILE_BYTES;
    if (entry.size !== null && entry.size > limit) throw tooLarge(entry.path, limit);
    const res = await options.fetch(entry.url, { accept: rawAccept(source), maxBytes: limit });
    if (res.status !== 200) {
      throw new AppError("invalid_request", `${entry.url.href} answered HTTP ${res.status}; nothing was installed`);
    }
    if (res.truncated) throw tooLarge(entry.path, limit);
    total += res.body.length;
    if (total > MAX_SKILL_TOTAL_BYTES) {
      throw new AppError("payload_too_large", `the skill is larger than ${MAX_SKILL_TOTAL_BYTES / 1048576} MiB in all`);
    }
    files.set(entry.path, res.body);
  }
  let name: string;
  try {
    name = parseSkillMd(files.get("SKILL.md")!.toString("utf8"), null).name;
  } catch (error) {
    throw new AppError("invalid_request", `not installed: ${(error as Error).message}`);
  }
  return writeSkill(options.skillsDir, name, files, {
    source: rawUrl,
    executable: entries.filter((e) => e.executable).map((e) => e.path),
    replace: options.replace === true,
  });
}

function describe(source: InstallSource): string {
  if (source.kind === "file") return source.url.href;
  return `${source.owner}/${source.repo}${source.ref ? `@${source.ref}` : ""}:${source.folder || "/"}`;
}

function rawAccept(source: InstallSource): string {
  return source.kind === "github" ? "application/vnd.github.raw" : "text/markdown,text/plain;q=0.9,*/*;q=0.5";
}

function tooLarge(path: string, limit: number): AppError {
  return new AppError("payload_too_large", `${path} is larger than ${Math.round(limit / 1024)} KiB; not installed`);
}

function fileEntry(url: URL): RemoteEntry {
  return { path: "SKILL.md", executable: false, url, size: null };
}

/** The skill folder's files from the git tree API (`<ref>:<folder>`, recursive). */
async function githubEntries(source: Extract<InstallSource, { kind: "github" }>, fetch: InstallFetch) {
  const repo = `${source.api}/repos/${encodeURIComponent(source.owner)}/${encodeURIComponent(source.repo)}`;
  const treeish = `${source.ref ?? "HEAD"}:${source.folder}`;
  const treeUrl = new URL(`${repo}/git/trees/${encodeURIComponent(treeish)}?recursive=1`);
  const res = await fetch(treeUrl, { accept: "application/vnd.github+json", maxBytes: MAX_TREE_BYTES });
  if (res.status === 404)
    throw new AppError("not_found", `no folder ${describe(source)} (HTTP 404 from ${treeUrl.host})`);
  if (res.status !== 200)
    throw new AppError("invalid_request", `${treeUrl.host} answered HTTP ${res.status} for the tree`);
  if (res.truncated) throw new AppError("payload_too_large", "the folder's file list is too large to be a skill");
  let tree: { tree?: unknown; truncated?: unknown };
  try {
    tree = JSON.parse(res.body.toString("utf8")) as typeof tree;
  } catch {
    throw new AppError("invalid_request", `${treeUrl.host} sent a tree that is not JSON`);
  }
  if (!Array.isArray(tree.tree) || tree.truncated === true) {
    throw new AppError("invalid_request", `${treeUrl.host} sent an unusable or truncated tree`);
  }
  const entries: RemoteEntry[] = [];
  for (const raw of tree.tree as Array<Record<string, unknown>>) {
    const path = String(raw.path ?? "");
    const type = raw.type;
    const mode = String(raw.mode ?? "");
    if (type === "tree") {
      checkEntryPath(path);
      continue;
    }
    if (type !== "blob" || mode === "120000") {
      throw new AppError(
        "invalid_request",
        `${path.slice(0, 200)} is a ${mode === "120000" ? "symlink" : String(type)}; skills may hold regular files only`,
      );
    }
    checkEntryPath(path);
    const fileUrl = new URL(
      `${repo}/contents/${[...source.folder.split("/").filter(Boolean), ...path.split("/")].map(encodeURIComponent).join("/")}`,
    );
    if (source.ref) fileUrl.searchParams.set("ref", source.ref);
    entries.push({
      path,
      executable: mode === "100755",
      url: fileUrl,
      size: typeof raw.size === "number" ? raw.size : null,
    });
    if (entries.length > MAX_SKILL_FILES) {
      throw new AppError("payload_too_large", `the skill folder has more than ${MAX_SKILL_FILES} files`);
    }
  }
  return entries;
}

/** Refuses entry names that could leave the skill folder or hide in it. */
export function checkEntryPath(path: string): void {
  const refuse = (why: string) => {
    throw new AppError("invalid_request", `refused entry "${path.slice(0, 200)}": ${why}; nothing was installed`);
  };
  if (path.length === 0 || path.length > 300) refuse("empty or too long");
  if (/[\u0000-\u001f\u007f\\]/.test(path)) refuse("control character or backslash");
  if (path.startsWith("/") || /^[A-Za-z]:/.test(path)) refuse("absolute path");
  const segments = path.split("/");
  if (segments.length > MAX_DEPTH) refuse(`deeper than ${MAX_DEPTH} folders`);
  for (const s of segments) {
    if (s === "" || s === "." || s === "..") refuse("empty, . or .. segment");
    if (s === ".git") refuse(".git folder");
  }
}

function writeSkill(
  skillsDir: string,
  name: string,
  files: ReadonlyMap<string, Buffer>,
  meta: { source: string; executable: string[]; replace: boolean },
): InstalledSkill {
  const target = join(skillsDir, name);
  const exists = existsSync(target);
  if (exists && !meta.replace) {
    throw new AppError("conflict", `a skill named ${name} is installed already; uninstall it or install with replace`);
  }
  mkdirSync(skillsDir, { recursive: true, mode: 0o700 });
  const temp = mkdtempSync(join(skillsDir, ".install-"));
  try {
    for (const [path, body] of files) {
      checkEntryPath(path);
      const file = join(temp, ...path.split("/"));
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      writeFileSync(file, body, { mode: 0o644, flag: "wx" });
    }
    try {
      loadSkill(temp, name);
    } catch (error) {
      if (error instanceof SkillInvalid) throw new AppError("invalid_request", `not installed: ${error.message}`);
      throw error;
    }
    if (exists) rmSync(target, { recursive: true, force: true });
    renameSync(temp, target);
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
  const skill = loadSkill(target, name);
  return {
    name,
    path: target,
    source: meta.source,
    files: [...files.keys()].sort(),
    not_executable: meta.executable,
    commands: skill.commands,
    replaced: exists,
  };
}
