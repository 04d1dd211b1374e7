import type { DeleteHistoryResult, GetDataOverviewResult } from "@assistant/client";
import { useState } from "react";
import { client } from "../api.ts";
import { Field } from "../Field.tsx";
import { formatBytes } from "../format.ts";
import { useMessages } from "../i18n.ts";
import { errorText, usePoll } from "../usePoll.ts";
import { downloadBlob, exportFileName } from "./download.ts";

type Counts = GetDataOverviewResult["counts"];
const COUNTS: Array<keyof Counts> = ["sessions", "messages", "tasks", "events", "memories", "schedules"];

/** The data directory: its files and sizes, the database counts, export, delete the history, the vault's key names. */
export function DataTab() {
  const t = useMessages();
  const overview = usePoll(() => client.getDataOverview());
  const vault = usePoll(() => client.listVaultKeys({ limit: 100 }), 10_000);
  const [notice, setNotice] = useState<string>();
  const [failure, setFailure] = useState<string>();
  const [exporting, setExporting] = useState(false);

  async function act(run: () => Promise<string>) {
    setFailure(undefined);
    try {
      setNotice(await run());
    } catch (error) {
      setNotice(undefined);
      setFailure(errorText(error));
    }
    await overview.refresh();
  }

  const data = overview.data;
  return (
    <div className="tab data">
      <h1>{t.dataTitle}</h1>
      {overview.error && (
        <p role="alert" className="error">
          {overview.error}
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

      <section aria-labelledby="data-counts">
        <h2 id="data-counts">{t.dataCounts}</h2>
        {data && (
          <dl className="facts" data-testid="data-counts">
            {COUNTS.map((name) => (
              <Count key={name} label={t.dataCountNames[name]} value={data.counts[name]} />
            ))}
          </dl>
        )}
      </section>

      <section aria-labelledby="data-files">
        <h2 id="data-files">{t.dataFiles}</h2>
        {data && (
          <>
            <p>
              {t.dataDir} <code data-testid="data-dir">{data.data_dir}</code>
            </p>
            <div className="table-wrap">
              <table className="file-table" aria-labelledby="data-files">
                <thead>
                  <tr>
                    <th scope="col" className="file-cell">
                      {t.dataFile}
                    </th>
                    <th scope="col" className="file-cell file-size">
                      {t.dataSize}
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {data.files.map((file) => (
                    <tr key={file.path}>
                      <td className="file-cell">
                        <code>{file.path}</code>
                      </td>
                      <td className="file-cell file-size">
                        {file.partial ? t.dataAtLeast(formatBytes(file.bytes)) : formatBytes(file.bytes)}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </>
        )}
        <p className="muted">{t.dataFilesHelp}</p>
      </section>

      <section aria-labelledby="data-export">
        <h2 id="data-export">{t.dataExport}</h2>
        <p>{t.dataExportHelp}</p>
        <button
          type="button"
          disabled={exporting}
          onClick={() =>
            act(async () => {
              setExporting(true);
              try {
                const archive = await client.exportData();
                downloadBlob(archive, exportFileName());
                return t.dataExported(formatBytes(archive.size));
              } finally {
                setExporting(false);
              }
            })
          }
        >
          {exporting ? t.dataExporting : t.dataExportButton}
        </button>
      </section>

      <section aria-labelledby="data-vault">
        <h2 id="data-vault">{t.dataVault}</h2>
        <p className="muted">{t.dataVaultHelp}</p>
        {vault.error && (
          <p role="alert" className="error">
            {vault.error}
          </p>
        )}
        <ul aria-labelledby="data-vault" data-testid="vault-keys">
          {vault.data?.items.length === 0 && <li className="empty">{t.dataVaultEmpty}</li>}
          {vault.data?.items.map((item) => (
            <li key={item.key}>
              <code>{item.key}</code>
            </li>
          ))}
        </ul>
      </section>

      <DeleteHistory act={act} />
    </div>
  );
}

function Count({ label, value }: { label: string; value: number }) {
  return (
    <>
      <dt>{label}</dt>
      <dd>{value}</dd>
    </>
  );
}

function DeleteHistory({ act }: { act: (run: () => Promise<string>) => Promise<void> }) {
  const t = useMessages();
  const [typed, setTyped] = useState("");
  const confirmed = typed.trim().toLowerCase() === t.dataDeleteWord;
  const done = (result: DeleteHistoryResult) => t.dataDeleted(result);
  return (
    <section aria-labelledby="data-delete" className="danger">
      <h2 id="data-delete">{t.dataDelete}</h2>
      <p>{t.dataDeleteHelp}</p>
      <form
        className="row"
        onSubmit={(event) => {
          event.preventDefault();
          if (!confirmed) return;
          setTyped("");
          // The page checked the word of its language; the API's own word is always "delete".
          void act(async () => done(await client.deleteHistory({ confirm: "delete" })));
        }}
      >
        <Field label={t.dataDeleteConfirm}>
          {(id) => <input id={id} value={typed} onChange={(e) => setTyped(e.target.value)} autoComplete="off" />}
        </Field>
        <button type="submit" className="danger" disabled={!confirmed}>
          {t.dataDeleteButton}
        </button>
      </form>
    </section>
  );
}
