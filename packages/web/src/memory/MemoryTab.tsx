import type { Memory, MemorySearchHit } from "@assistant/client";
import { type FormEvent, useState } from "react";
import { client } from "../api.ts";
import { Field } from "../Field.tsx";
import { formatBytes } from "../format.ts";
import { useMessages } from "../i18n.ts";
import { errorText, usePoll } from "../usePoll.ts";
import { MEMORY_KINDS, MemoryItem, type MemoryKind } from "./MemoryItem.tsx";

/** The second brain: overview, hybrid search, remember / forget, learning on or paused, clear everything. */
export function MemoryTab() {
  const t = useMessages();
  const overview = usePoll(() => client.getMemoryOverview({ recent: 10 }));
  const settings = usePoll(() => client.getMemorySettings());
  const [notice, setNotice] = useState<string>();
  const [failure, setFailure] = useState<string>();
  const [hits, setHits] = useState<MemorySearchHit[]>();

  async function act(run: () => Promise<string>) {
    setFailure(undefined);
    try {
      setNotice(await run());
    } catch (error) {
      setNotice(undefined);
      setFailure(errorText(error));
    }
    await Promise.all([overview.refresh(), settings.refresh()]);
  }

  const forget = (memory: Memory) =>
    act(async () => {
      await client.deleteMemory(memory.id);
      setHits((all) => all?.filter((hit) => hit.memory.id !== memory.id));
      return t.memForgotten;
    });

  const data = overview.data;
  const learning = settings.data?.learning_enabled ?? data?.learning_enabled;
  return (
    <div className="tab memory">
      <h1>{t.memTitle}</h1>
      {(overview.error ?? settings.error) && (
        <p role="alert" className="error">
          {overview.error ?? settings.error}
        </p>
      )}
      <p role="status" className="notice-line">
        {notice}
      </p>
      {failure && (
        <p role="alert" className="error">
          {failure}
        </p>
      )}

      <section aria-labelledby="mem-overview">
        <h2 id="mem-overview">{t.memOverview}</h2>
        {data && (
          <dl className="facts" data-testid="memory-overview">
            <dt>{t.memTotal}</dt>
            <dd>{data.total}</dd>
            {MEMORY_KINDS.map((kind) => (
              <MemoryCount key={kind} label={t.memKinds[kind]} value={data.by_kind[kind]} />
            ))}
            <dt>{t.memSize}</dt>
            <dd>{formatBytes(data.size_bytes)}</dd>
            <dt>{t.memVectors}</dt>
            <dd>
              {data.vectors.embedder
                ? `${data.vectors.embedded} · ${t.memPending} ${data.vectors.pending} · ${data.vectors.embedder}${data.vectors.dims ? ` (${data.vectors.dims})` : ""}`
                : t.memTextOnly}
            </dd>
            <dt>{t.memLastLearned}</dt>
            <dd>{data.last_learned_at ? new Date(data.last_learned_at).toLocaleString() : t.memNever}</dd>
          </dl>
        )}
        <div className="row">
          <span data-testid="memory-learning">
            {t.memLearning}: {learning === undefined ? "…" : learning ? t.memLearningOn : t.memLearningPaused}
          </span>
          {learning !== undefined && (
            <button
              type="button"
              onClick={() =>
                act(async () => {
                  const next = await client.setMemorySettings({ learning_enabled: !learning });
                  return next.learning_enabled ? t.memLearningResumed : t.memLearningWasPaused;
                })
              }
            >
              {learning ? t.memPauseLearning : t.memResumeLearning}
            </button>
          )}
        </div>
        {settings.data?.embeddings.reason && <p className="muted">{settings.data.embeddings.reason}</p>}
        <h3>{t.memRecent}</h3>
        <ul className="memories" aria-label={t.memRecent}>
          {data?.recent.length === 0 && <li className="empty">{t.memEmpty}</li>}
          {data?.recent.map((memory) => (
            <MemoryItem key={memory.id} memory={memory} onForget={forget} />
          ))}
        </ul>
      </section>

      <MemorySearch hits={hits} setHits={setHits} onForget={forget} />
      <Remember act={act} />
      <ClearAll act={act} />
    </div>
  );
}

function MemoryCount({ label, value }: { label: string; value: number }) {
  return (
    <>
      <dt>{label}</dt>
      <dd>{value}</dd>
    </>
  );
}

function MemorySearch(props: {
  hits: MemorySearchHit[] | undefined;
  setHits: (hits: MemorySearchHit[] | undefined) => void;
  onForget: (memory: Memory) => void;
}) {
  const t = useMessages();
  const [query, setQuery] = useState("");
  const [kind, setKind] = useState<MemoryKind | "">("");
  const [error, setError] = useState<string>();

  async function search(event: FormEvent) {
    event.preventDefault();
    setError(undefined);
    if (!query.trim()) {
      setError(t.memSearchEmpty);
      return;
    }
    try {
      const page = await client.searchMemory({ q: query, limit: 20, ...(kind ? { kind } : {}) });
      props.setHits(page.items);
    } catch (failure) {
      setError(errorText(failure));
    }
  }

  return (
    <section aria-labelledby="mem-search">
      <h2 id="mem-search">{t.memSearch}</h2>
      <form className="row" onSubmit={search}>
        <Field label={t.memQuery}>
          {(id) => <input id={id} type="search" value={query} onChange={(e) => setQuery(e.target.value)} />}
        </Field>
        <Field label={t.memFilterKind}>
          {(id) => (
            <select id={id} value={kind} onChange={(e) => setKind(e.target.value as MemoryKind | "")}>
              <option value="">{t.memAllKinds}</option>
              {MEMORY_KINDS.map((k) => (
                <option key={k} value={k}>
                  {t.memKinds[k]}
                </option>
              ))}
            </select>
          )}
        </Field>
        <button type="submit">{t.memSearchButton}</button>
      </form>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {props.hits && (
        <ol className="memories" aria-label={t.memResults}>
          {props.hits.length === 0 && <li className="empty">{t.memNoHits}</li>}
          {props.hits.map((hit) => (
            <MemoryItem key={hit.memory.id} memory={hit.memory} hit={hit} onForget={props.onForget} />
          ))}
        </ol>
      )}
      <p className="muted">{t.memRankingHelp}</p>
    </section>
  );
}

function Remember({ act }: { act: (run: () => Promise<string>) => Promise<void> }) {
  const t = useMessages();
  const [kind, setKind] = useState<MemoryKind>("fact");
  const [subject, setSubject] = useState("");
  const [content, setContent] = useState("");

  function remember(event: FormEvent) {
    event.preventDefault();
    void act(async () => {
      const stored = await client.createMemory({
        content,
        kind,
        ...(subject.trim() ? { subject: subject.trim() } : {}),
      });
      setContent("");
      setSubject("");
      return stored.action === "created" ? t.memRemembered : t.memAlreadyKnown;
    });
  }

  return (
    <section aria-labelledby="mem-remember">
      <h2 id="mem-remember">{t.memRemember}</h2>
      <form className="stack" onSubmit={remember}>
        <div className="row">
          <Field label={t.memKind}>
            {(id) => (
              <select id={id} value={kind} onChange={(e) => setKind(e.target.value as MemoryKind)}>
                {MEMORY_KINDS.map((k) => (
                  <option key={k} value={k}>
                    {t.memKinds[k]}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label={t.memSubject}>
            {(id) => <input id={id} value={subject} onChange={(e) => setSubject(e.target.value)} />}
          </Field>
        </div>
        <Field label={t.memContent}>
          {(id) => <textarea id={id} rows={2} value={content} onChange={(e) => setContent(e.target.value)} />}
        </Field>
        <div>
          <button type="submit">{t.memRememberButton}</button>
        </div>
      </form>
    </section>
  );
}

function ClearAll({ act }: { act: (run: () => Promise<string>) => Promise<void> }) {
  const t = useMessages();
  const [typed, setTyped] = useState("");
  const confirmed = typed.trim().toLowerCase() === t.memClearWord;
  return (
    <section aria-labelledby="mem-clear" className="danger">
      <h2 id="mem-clear">{t.memClear}</h2>
      <p>{t.memClearHelp}</p>
      <form
        className="row"
        onSubmit={(event) => {
          event.preventDefault();
          if (!confirmed) return;
          setTyped("");
          void act(async () => t.memCleared((await client.clearMemory()).removed));
        }}
      >
        <Field label={t.memClearConfirm}>
          {(id) => <input id={id} value={typed} onChange={(e) => setTyped(e.target.value)} autoComplete="off" />}
        </Field>
        <button type="submit" disabled={!confirmed}>
          {t.memClearButton}
        </button>
      </form>
    </section>
  );
}
