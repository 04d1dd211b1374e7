import type { DocsList } from "@assistant/client";
import { type FormEvent, useCallback, useEffect, useState } from "react";
import { client } from "../api.ts";
import { Field } from "../Field.tsx";
import { useMessages } from "../i18n.ts";
import { errorText, usePoll } from "../usePoll.ts";
import { DocArticle, type DocHeading } from "./DocArticle.tsx";
import { type DocPlace, docHref, docPlaceOf, openDoc } from "./docPaths.ts";

const FIRST_DOCS = ["README.md", "index.md"];

/** The daemon's documentation: the files and the open file's headings, search across the docs, one doc rendered. */
export function DocTab() {
  const t = useMessages();
  const list = usePoll(() => client.listDocs(), 30_000);
  const [place, setPlace] = useState<DocPlace>(() => docPlaceOf(window.location));
  const [headings, setHeadings] = useState<DocHeading[]>([]);

  useEffect(() => {
    const onPop = () => setPlace(docPlaceOf(window.location));
    window.addEventListener("popstate", onPop);
    return () => window.removeEventListener("popstate", onPop);
  }, []);

  const items = list.data?.items ?? [];
  const file =
    place.file ??
    FIRST_DOCS.map((name) => items.find((item) => item.path === name)).find(Boolean)?.path ??
    items[0]?.path;
  const onHeadings = useCallback((found: DocHeading[]) => setHeadings(found), []);

  if (list.data && list.data.folders.length === 0) return <NoDocs list={list.data} />;
  return (
    <div className="tab doc">
      <h1 className="visually-hidden">{t.docTitle}</h1>
      {list.error && (
        <p role="alert" className="error">
          {list.error}
        </p>
      )}
      <div className="doc-layout">
        <nav className="doc-nav" aria-label={t.docContents}>
          <DocSearch current={file} />
          <h2 id="doc-files">{t.docFiles}</h2>
          <ul className="doc-files" aria-labelledby="doc-files">
            {list.data && items.length === 0 && <li className="empty">{t.docNoFiles}</li>}
            {items.map((item) => (
              <li key={item.path}>
                <DocLink file={item.path} current={item.path === file}>
                  {item.title}
                </DocLink>{" "}
                <span className="muted doc-path">{item.path}</span>
              </li>
            ))}
          </ul>
          {file && headings.length > 0 && (
            <>
              <h2 id="doc-headings">{t.docOnThisPage}</h2>
              <ul className="doc-headings" aria-labelledby="doc-headings">
                {headings.map((heading) => (
                  <li key={heading.slug} className={`doc-level-${heading.level}`}>
                    <DocLink file={file} anchor={heading.slug}>
                      {heading.text}
                    </DocLink>
                  </li>
                ))}
              </ul>
            </>
          )}
        </nav>
        <section className="doc-main" aria-label={file ?? t.docTitle}>
          {file ? (
            <DocArticle file={file} anchor={place.anchor} onHeadings={onHeadings} />
          ) : (
            list.data && <p className="empty">{t.docNoFiles}</p>
          )}
        </section>
      </div>
    </div>
  );
}

function DocLink(props: { file: string; anchor?: string; current?: boolean; children: string }) {
  return (
    <a
      href={docHref(props.file, props.anchor)}
      aria-current={props.current ? "page" : undefined}
      onClick={(event) => {
        if (event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return;
        event.preventDefault();
        openDoc(props.file, props.anchor);
      }}
    >
      {props.children}
    </a>
  );
}

/** Search across the docs by the daemon (`GET /api/docs?q=`): files holding every word, most matches first. */
function DocSearch({ current }: { current: string | undefined }) {
  const t = useMessages();
  const [query, setQuery] = useState("");
  const [results, setResults] = useState<DocsList["items"]>();
  const [error, setError] = useState<string>();

  async function search(event: FormEvent) {
    event.preventDefault();
    setError(undefined);
    if (!query.trim()) {
      setResults(undefined);
      return;
    }
    try {
      setResults((await client.listDocs({ q: query.trim() })).items);
    } catch (failure) {
      setError(errorText(failure));
    }
  }

  return (
    <search className="doc-search">
      <form className="row" onSubmit={search}>
        <Field label={t.docSearchLabel}>
          {(id) => <input id={id} type="search" value={query} onChange={(e) => setQuery(e.target.value)} />}
        </Field>
        <button type="submit">{t.docSearch}</button>
      </form>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {results && (
        <>
          <ol className="doc-results" aria-label={t.docResults}>
            {results.length === 0 && <li className="empty">{t.docNoMatch}</li>}
            {results.map((item) => (
              <li key={item.path}>
                <DocLink file={item.path} current={item.path === current}>
                  {item.title}
                </DocLink>{" "}
                <span className="muted">{t.docMatches(item.matches ?? 0)}</span>
                {item.excerpt && <span className="doc-excerpt">{item.excerpt}</span>}
              </li>
            ))}
          </ol>
          <button
            type="button"
            onClick={() => {
              setResults(undefined);
              setQuery("");
            }}
          >
            {t.docClearSearch}
          </button>
        </>
      )}
    </search>
  );
}

/** No docs folder: where the daemon looked, and how to start it where the docs are. */
function NoDocs({ list }: { list: DocsList }) {
  const t = useMessages();
  return (
    <div className="tab doc empty-state">
      <h1>{t.docTitle}</h1>
      <p role="status">{t.docNone}</p>
      <p>
        {t.docLookedIn} <code>{`${list.working_directory}/docs`}</code>
      </p>
      <pre>
        <code>{"cd /path/to/the/folder/holding/docs\nassistant stop\nassistant start"}</code>
      </pre>
    </div>
  );
}
