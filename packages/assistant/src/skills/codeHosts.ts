// Where a skill install URL points (docs/skills.md#hosts: from a code-hosting repo the daemon may fetch the repo tree;
// on other hosts only the file at the URL is fetched). GitHub (github.com and its raw host) and GitHub Enterprise hosts
// named in ASSISTANT_GITHUB_ENTERPRISE_HOSTS are read through the GitHub REST API: the git tree of the skill's folder,
// then each file. A ref holding a `/` cannot be told apart from the path and is not supported.

export type InstallSource =
  | { kind: "file"; url: URL }
  | {
      kind: "github";
      /** REST API root: https://api.github.com or https://<enterprise host>/api/v3. */
      api: string;
      owner: string;
      repo: string;
      /** Branch, tag or commit; null = the default branch. */
      ref: string | null;
      /** The skill folder in the repo, `` for the root. */
      folder: string;
    };

const SEGMENT = /^[A-Za-z0-9_.-]{1,100}$/;

/** Reads an install URL. Throws with a message for the person when the URL cannot be used. */
export function installSource(raw: string, enterpriseHosts: readonly string[]): InstallSource {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`"${raw.slice(0, 200)}" is not a URL`);
  }
  if (url.protocol !== "https:") throw new Error(`skills install over HTTPS only; ${url.protocol}// is refused`);
  if (url.username || url.password) throw new Error("a URL carrying a user name or password is refused");
  const host = url.host.toLowerCase();
  const parts = url.pathname.split("/").filter(Boolean).map(decodeURIComponent);
  if (host === "raw.githubusercontent.com" && parts.length >= 3) {
    // /<owner>/<repo>/<ref>/<path...>/SKILL.md
    return github("https://api.github.com", parts[0]!, parts[1]!, parts[2]!, folderOf(parts.slice(3)));
  }
  const enterprise = enterpriseHosts.includes(host);
  if ((host === "github.com" || enterprise) && parts.length >= 2) {
    const api = enterprise ? `https://${url.host}/api/v3` : "https://api.github.com";
    const [owner, repo, kind, ref, ...rest] = parts;
    if (kind === undefined) return github(api, owner!, repo!.replace(/\.git$/, ""), null, "");
    if ((kind === "tree" || kind === "blob") && ref !== undefined) {
      return github(api, owner!, repo!, ref, kind === "blob" ? folderOf(rest) : rest.join("/"));
    }
    if (enterprise && kind === "raw" && ref !== undefined) return github(api, owner!, repo!, ref, folderOf(rest));
    throw new Error(`${url.href} is not a repository, folder or SKILL.md address on ${url.host}`);
  }
  const path = url.pathname.endsWith("/SKILL.md") ? url.pathname : `${url.pathname.replace(/\/+$/, "")}/SKILL.md`;
  return { kind: "file", url: new URL(`${url.origin}${path}${url.search}`) };
}

/** The folder of a SKILL.md path (or the path itself when it names a folder). */
function folderOf(parts: string[]): string {
  const last = parts[parts.length - 1];
  return (last === "SKILL.md" ? parts.slice(0, -1) : parts).join("/");
}

function github(api: string, owner: string, repo: string, ref: string | null, folder: string): InstallSource {
  for (const [label, value] of [
    ["owner", owner],
    ["repository", repo],
  ] as const) {
    if (!SEGMENT.test(value)) throw new Error(`the ${label} name "${value.slice(0, 100)}" is not valid`);
  }
  if (ref !== null && !/^[A-Za-z0-9_.-]{1,200}$/.test(ref))
    throw new Error(`the ref "${ref.slice(0, 100)}" is not valid`);
  if (folder.split("/").some((s) => s === ".." || s === ".")) throw new Error("the folder path may not hold . or ..");
  return { kind: "github", api, owner, repo, ref, folder };
}
