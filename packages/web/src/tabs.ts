// The ten tabs: their names (the accessible names screen readers and tests find), URL paths and keys (1-9; Data
// has none).
export interface Tab {
  id: string;
  name: string;
  path: string;
  key: string | undefined;
}

const NAMES = ["Chat", "Scheduled", "Router", "Doc", "Tasks", "Calendar", "Memory", "Mission", "Settings", "Data"];

export const TABS: Tab[] = NAMES.map((name, index) => ({
  id: name.toLowerCase(),
  name,
  path: `/${name.toLowerCase()}`,
  key: index < 9 ? String(index + 1) : undefined,
}));

/** The tab a URL path shows, undefined for a path that is no tab's. */
export function tabOfPath(path: string): Tab | undefined {
  const first = `/${path.split("/")[1] ?? ""}`;
  return TABS.find((tab) => tab.path === first);
}

/** The tab a key press opens (1-9), undefined for any other key. */
export function tabOfKey(key: string): Tab | undefined {
  return TABS.find((tab) => tab.key === key);
}
