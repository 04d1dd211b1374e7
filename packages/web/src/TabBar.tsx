import { useMessages } from "./i18n.ts";
import { TABS, type Tab } from "./tabs.ts";

/** The tab bar: one link per tab (a real URL each), announced as tabs; the key of each is shown. */
export function TabBar({ current, onOpen }: { current: Tab; onOpen: (tab: Tab) => void }) {
  const t = useMessages();
  return (
    <div className="tabbar" role="tablist" aria-label={t.tabs}>
      {TABS.map((tab) => (
        <a
          key={tab.id}
          role="tab"
          href={tab.path}
          aria-selected={tab.id === current.id}
          aria-controls="panel"
          aria-keyshortcuts={tab.key}
          onClick={(event) => {
            if (event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey) return;
            event.preventDefault();
            onOpen(tab);
          }}
        >
          {tab.name}
        </a>
      ))}
    </div>
  );
}
