import { ApiError } from "@assistant/client";
import { type MouseEvent, useEffect, useRef, useState } from "react";
import { client } from "../api.ts";
import { useMessages } from "../i18n.ts";
import { Markdown } from "../Markdown.tsx";
import { errorText } from "../usePoll.ts";
import { docHref, openDoc, resolveDocLink, slugger } from "./docPaths.ts";

export interface DocHeading {
  level: number;
  text: string;
  slug: string;
}

// Heading ids carry a prefix so a heading never takes the id of an element of the app (a heading "Panel").
const ID_PREFIX = "doc-";
export const headingId = (slug: string) => `${ID_PREFIX}${slug}`;

/**
 * One doc rendered by Markdown.tsx (raw HTML as text). Once rendered, its headings get GitHub's anchors (so
 * `#under-load` links work) and its links are pointed at the tab: another doc opens here, a heading scrolls, a
 * file outside the docs folder is shown as text (the tab cannot open it); web links stay as Markdown.tsx made them.
 */
export function DocArticle(props: {
  file: string;
  anchor: string | undefined;
  onHeadings: (headings: DocHeading[]) => void;
}) {
  const t = useMessages();
  const { file, anchor, onHeadings } = props;
  const [text, setText] = useState<string>();
  const [error, setError] = useState<string>();
  const article = useRef<HTMLDivElement>(null);

  useEffect(() => {
    let current = true;
    setText(undefined);
    setError(undefined);
    client.getDoc(file).then(
      (markdown) => current && setText(markdown),
      (failure: unknown) => {
        if (!current) return;
        setError(
          failure instanceof ApiError && failure.code === "not_found" ? t.docNotFound(file) : errorText(failure),
        );
      },
    );
    return () => {
      current = false;
    };
  }, [file, t]);

  // After each render of a new text: anchors on headings, links pointed at the tab, the headings for the contents.
  useEffect(() => {
    const root = article.current;
    if (!root || text === undefined) return;
    const slug = slugger();
    const headings: DocHeading[] = [];
    for (const element of root.querySelectorAll<HTMLElement>("h1, h2, h3, h4, h5, h6")) {
      const heading = { level: Number(element.tagName[1]), text: element.textContent ?? "", slug: "" };
      heading.slug = slug(heading.text);
      element.id = headingId(heading.slug);
      element.tabIndex = -1;
      headings.push(heading);
    }
    onHeadings(headings);
    for (const link of root.querySelectorAll<HTMLAnchorElement>("a[href]")) {
      const target = resolveDocLink(file, link.getAttribute("href")!);
      if (target.kind === "external") continue;
      link.removeAttribute("target");
      link.removeAttribute("rel");
      if (target.kind === "outside") {
        link.removeAttribute("href");
        link.title = t.docOutside;
        link.className = "doc-outside";
      } else if (target.kind === "anchor") {
        link.href = docHref(file, target.anchor);
        link.dataset.anchor = target.anchor;
      } else {
        link.href = docHref(target.file, target.anchor);
        link.dataset.file = target.file;
        if (target.anchor) link.dataset.anchor = target.anchor;
      }
    }
  }, [text, file, onHeadings, t]);

  // The heading the address names, once the doc is there (a deep link, a link between docs, the contents).
  useEffect(() => {
    if (text === undefined || !anchor) return;
    const element = document.getElementById(headingId(anchor));
    element?.scrollIntoView({ block: "start" });
    element?.focus({ preventScroll: true });
  }, [text, anchor]);

  function follow(event: MouseEvent) {
    const link = (event.target as HTMLElement).closest("a");
    if (!link || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return;
    if (link.dataset.file) {
      event.preventDefault();
      openDoc(link.dataset.file, link.dataset.anchor);
    } else if (link.dataset.anchor) {
      event.preventDefault();
      openDoc(file, link.dataset.anchor);
    }
  }

  if (error) {
    return (
      <p role="alert" className="error">
        {error}
      </p>
    );
  }
  if (text === undefined) return <p className="muted">{t.docLoading}</p>;
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions lint/a11y/useKeyWithClickEvents: the links inside are the controls (Enter on a link is a click)
    <div className="doc-article markdown" ref={article} onClick={follow} data-testid="doc-article">
      <Markdown text={text} />
    </div>
  );
}
