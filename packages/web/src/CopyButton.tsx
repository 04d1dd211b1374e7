import { useState } from "react";
import { useMessages } from "./i18n.ts";

/** Copies `text` to the clipboard and says so (or why not) next to the button. */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const t = useMessages();
  const [said, setSaid] = useState<string | undefined>();
  async function copy() {
    try {
      await navigator.clipboard.writeText(text);
      setSaid(t.copied);
    } catch {
      setSaid(t.copyFailed);
    }
    window.setTimeout(() => setSaid(undefined), 2_000);
  }
  return (
    <span className="copy">
      <button type="button" className="copy-button" aria-label={label} onClick={copy}>
        {t.copy}
      </button>
      {said && <span role="status">{said}</span>}
    </span>
  );
}
