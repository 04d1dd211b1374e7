import type { CalendarItem } from "@assistant/client";
import { useMessages } from "../i18n.ts";
import { navigate, taskPath } from "../tasks/taskPaths.ts";

// One entry of the calendar as a link: a past run opens its task (/tasks/<id>), a future schedule fire the
// Scheduled tab, a future heartbeat the Mission tab. A plain click stays in the page; a modifier opens a new tab.

export function entryPath(item: CalendarItem): string {
  if (item.kind === "schedule") return "/scheduled";
  if (item.ref_id) return taskPath(item.ref_id);
  return "/mission";
}

export function CalendarEntry({ item, withDay = false }: { item: CalendarItem; withDay?: boolean }) {
  const t = useMessages();
  const at = new Date(item.at);
  const time = new Intl.DateTimeFormat(t.locale, {
    ...(withDay ? { weekday: "short", day: "numeric", month: "short" } : {}),
    hour: "2-digit",
    minute: "2-digit",
  }).format(at);
  const href = entryPath(item);
  const kind = t.calKind[item.kind];
  const status = item.status ? (t.taskStatus[item.status as keyof typeof t.taskStatus] ?? item.status) : t.calUpcoming;
  return (
    <a
      className={`cal-entry cal-${item.kind}${item.status ? "" : " cal-future"}`}
      href={href}
      onClick={(event) => {
        if (event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey) return;
        event.preventDefault();
        navigate(href);
      }}
    >
      {/* Kind and status in words for screen readers, hidden text rather than an aria-label so the accessible name
          holds the visible text (WCAG 2.5.3, axe's label-content-name-mismatch). */}
      <time dateTime={item.at}>{time}</time> <span className="visually-hidden">{kind}: </span>
      <span className="cal-title">{item.title}</span>
      <span className="visually-hidden"> ({status})</span>
    </a>
  );
}
