import { ApiError } from "@assistant/client";
import { useCallback, useEffect, useState } from "react";
import { client } from "./api.ts";
import { CalendarTab } from "./calendar/CalendarTab.tsx";
import { ChatTab } from "./chat/ChatTab.tsx";
import { DataTab } from "./data/DataTab.tsx";
import { DocTab } from "./doc/DocTab.tsx";
import { initialLang, type Lang, MESSAGES, MessagesContext } from "./i18n.ts";
import { MemoryTab } from "./memory/MemoryTab.tsx";
import { MissionTab } from "./mission/MissionTab.tsx";
import { initialTheme, readPreference, type Theme, writePreference } from "./preferences.ts";
import { RouterTab } from "./router/RouterTab.tsx";
import { SignIn, Unreachable } from "./SignIn.tsx";
import { StatusStrip } from "./StatusStrip.tsx";
import { ScheduledTab } from "./scheduled/ScheduledTab.tsx";
import type { Appearance } from "./settings/OtherSettings.tsx";
import { SettingsTab } from "./settings/SettingsTab.tsx";
import { TabBar } from "./TabBar.tsx";
import { TABS, type Tab, tabOfKey, tabOfPath } from "./tabs.ts";
import { TasksTab } from "./tasks/TasksTab.tsx";

type Access = "checking" | "signed_in" | "signed_out" | "unreachable";

export function App() {
  const [lang, setLang] = useState<Lang>(() => initialLang(readPreference("lang"), navigator.languages));
  const [theme, setTheme] = useState<Theme>(() => initialTheme(readPreference("theme")));
  const [access, setAccess] = useState<Access>("checking");
  const [tab, setTab] = useState<Tab>(() => tabOfPath(window.location.pathname) ?? TABS[0]!);

  useEffect(() => {
    document.documentElement.lang = lang;
    writePreference("lang", lang);
  }, [lang]);
  useEffect(() => {
    if (theme === "system") delete document.documentElement.dataset.theme;
    else document.documentElement.dataset.theme = theme;
    writePreference("theme", theme);
  }, [theme]);

  // Whether the browser holds a session: the cookie is HttpOnly, so the page asks the daemon.
  useEffect(() => {
    client.getStatus().then(
      () => setAccess("signed_in"),
      (error: unknown) =>
        setAccess(error instanceof ApiError && error.code === "unauthorized" ? "signed_out" : "unreachable"),
    );
  }, []);

  const open = useCallback((next: Tab) => {
    if (window.location.pathname !== next.path) {
      window.history.pushState(null, "", next.path);
      window.dispatchEvent(new PopStateEvent("popstate"));
    }
    setTab(next);
  }, []);

  // A tab opens at its root view, also when it is the current tab on a sub-path (/tasks/<id>): the tab hears the
  // new address as it hears the back button.
  useEffect(() => {
    if (!tabOfPath(window.location.pathname)) window.history.replaceState(null, "", TABS[0]!.path);
    const onPop = () => setTab(tabOfPath(window.location.pathname) ?? TABS[0]!);
    window.addEventListener("popstate", onPop);
    return () => window.removeEventListener("popstate", onPop);
  }, []);

  // Keys 1-9 open a tab, except while typing in a field.
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.ctrlKey || event.metaKey || event.altKey || isTyping(event.target)) return;
      const next = tabOfKey(event.key);
      if (next) {
        event.preventDefault();
        open(next);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [open]);

  const t = MESSAGES[lang];
  return (
    <MessagesContext.Provider value={t}>
      <a className="skip" href="#panel">
        {t.skip}
      </a>
      <header className="top">
        <span className="brand">assistant</span>
        <TabBar current={tab} onOpen={open} />
        <div className="switches">
          <label>
            <span className="visually-hidden">{t.theme}</span>
            <select value={theme} onChange={(e) => setTheme(e.target.value as Theme)} aria-label={t.theme}>
              <option value="system">{t.themeSystem}</option>
              <option value="light">{t.themeLight}</option>
              <option value="dark">{t.themeDark}</option>
            </select>
          </label>
          <label>
            <span className="visually-hidden">{t.language}</span>
            <select value={lang} onChange={(e) => setLang(e.target.value as Lang)} aria-label={t.language}>
              <option value="en">EN</option>
              <option value="fr">FR</option>
            </select>
          </label>
        </div>
      </header>
      {access === "signed_in" && <StatusStrip />}
      <main id="panel" role="tabpanel" aria-label={tab.name} tabIndex={-1}>
        {access === "signed_out" && <SignIn />}
        {access === "unreachable" && <Unreachable />}
        {access === "signed_in" && <TabPanel tab={tab} appearance={{ lang, setLang, theme, setTheme }} />}
      </main>
    </MessagesContext.Provider>
  );
}

/** The screen of each tab (tabs.ts lists exactly these ids). */
function TabPanel({ tab, appearance }: { tab: Tab; appearance: Appearance }) {
  switch (tab.id) {
    case "chat":
      return <ChatTab />;
    case "tasks":
      return <TasksTab />;
    case "scheduled":
      return <ScheduledTab />;
    case "mission":
      return <MissionTab />;
    case "memory":
      return <MemoryTab />;
    case "router":
      return <RouterTab />;
    case "calendar":
      return <CalendarTab />;
    case "doc":
      return <DocTab />;
    case "settings":
      return <SettingsTab {...appearance} />;
    case "data":
      return <DataTab />;
    default:
      return null;
  }
}

function isTyping(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName);
}
