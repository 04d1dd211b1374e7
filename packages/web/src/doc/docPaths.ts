// The Doc tab's addresses and links. A doc opens at /doc?file=<path>#<heading>: the path stays in the query because
// the daemon serves a path whose last segment has a dot (guides/setup.md) as a file of the build, not as the app.

export const SPEC_PREFIX = "@spec/";

export interface DocPlace {
  file: string | undefined;
  anchor: string | undefined;
}

export function docPlaceOf(location: Pick<Location, "search" | "hash">): DocPlace {
  const file = new URLSearchParams(location.search).get("file") ?? undefined;
  const anchor = location.hash.length > 1 ? decodeURIComponent(location.hash.slice(1)) : undefined;
  return { file: file || undefined, anchor };
}

export function docHref(file: string | undefined, anchor?: string): string {
  const query = file ? `?${new URLSearchParams({ file })}` : "";
  return `/doc${query}${anchor ? `#${encodeURIComponent(anchor)}` : ""}`;
}

/** Opens a place of the tab as a link would: a history entry the back button returns from. */
export function openDoc(file: string | undefined, anchor?: string): void {
  const href = docHref(file, anchor);
  if (`${window.location.pathname}${window.location.search}${window.location.hash}` !== href) {
    window.history.pushState(null, "", href);
  }
  window.dispatchEvent(new PopStateEvent("popstate"));
}

export type DocLink =
  | { kind: "doc"; file: string; anchor: string | undefined }
  | { kind: "anchor"; anchor: string }
  | { kind: "outside" }
  | { kind: "external" };

/**
 * What a link in the doc `from` points at: another doc (a relative path ending in .md, resolved from `from`'s
 * folder), a heading of this doc (`#...`), a page on the web (a scheme, `//`, or a path from the site's root), or a
 * file the Doc tab cannot show (climbing out of the docs folder, or not Markdown).
 */
export function resolveDocLink(from: string, href: string): DocLink {
  if (href.startsWith("#")) return { kind: "anchor", anchor: decodeURIComponent(href.slice(1)) };
  if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith("/")) return { kind: "external" };
  const hashAt = href.indexOf("#");
  const target = hashAt === -1 ? href : href.slice(0, hashAt);
  const anchor = hashAt === -1 ? undefined : decodeURIComponent(href.slice(hashAt + 1)) || undefined;
  if (target === "") return anchor ? { kind: "anchor", anchor } : { kind: "outside" };
  const spec = from.startsWith(SPEC_PREFIX);
  const segments = (spec ? from.slice(SPEC_PREFIX.length) : from).split("/").slice(0, -1);
  for (const part of target.split("?")[0]!.split("/")) {
    if (part === "..") {
      if (segments.length === 0) return { kind: "outside" };
      segments.pop();
    } else if (part !== "." && part !== "") segments.push(decodeURIComponentSafe(part));
  }
  const file = (spec ? SPEC_PREFIX : "") + segments.join("/");
  return /\.md$/i.test(file) ? { kind: "doc", file, anchor } : { kind: "outside" };
}

function decodeURIComponentSafe(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces as dashes, repeats numbered (-1, -2). */
export function slugger(): (text: string) => string {
  const seen = new Map<string, number>();
  return (text) => {
    const base = text
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
      .replace(/ /g, "-");
    const count = seen.get(base);
    seen.set(base, (count ?? -1) + 1);
    return count === undefined ? base : `${base}-${count + 1}`;
  };
}
