import { useMessages } from "./i18n.ts";
import type { Tab } from "./tabs.ts";

/** A tab whose screen is not built yet says so plainly. */
export function NotBuilt({ tab }: { tab: Tab }) {
  const t = useMessages();
  return (
    <section className="notice" aria-labelledby="not-built">
      <h1 id="not-built">
        {tab.name}: {t.notBuiltTitle}
      </h1>
      <p>{t.notBuiltBody}</p>
    </section>
  );
}
