// Offering a Blob as a file download, and the sizes shown in the Data tab.

/** The name the daemon gives the archive (data/exportArchive.ts), for the browser's download. */
export function exportFileName(date = new Date()): string {
  return `assistant-export-${date.toISOString().slice(0, 10)}.zip`;
}

/** Saves `blob` through the browser's download (a link to an object URL, released once clicked). */
export function downloadBlob(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = fileName;
  link.rel = "noopener";
  document.body.append(link);
  link.click();
  link.remove();
  // The download has started from the click; the URL is released after the browser took it.
  window.setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
