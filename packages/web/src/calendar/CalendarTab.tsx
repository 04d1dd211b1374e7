import { type KeyboardEvent, useState } from "react";
import { client } from "../api.ts";
import { useMessages } from "../i18n.ts";
import { usePolling } from "../tasks/usePolling.ts";
import { ListView, MonthView, WeekView } from "./CalendarViews.tsx";
import { byDay, type CalendarView, dayKey, rangeOf, startOfDay, step } from "./range.ts";

// The Calendar tab: future schedule fires and mission heartbeats and past task runs and mission cycles
// (GET /api/calendar) by month, by week or as a list; previous / today / next by buttons or PageUp / PageDown /
// Home; a small screen starts on the list.

const VIEWS: CalendarView[] = ["month", "week", "list"];

function initialView(): CalendarView {
  return window.matchMedia?.("(max-width: 40rem)").matches ? "list" : "month";
}

export function CalendarTab() {
  const t = useMessages();
  const [view, setView] = useState<CalendarView>(initialView);
  const [anchor, setAnchor] = useState(() => startOfDay(new Date()));
  const [goTo, setGoTo] = useState("");
  const [goToError, setGoToError] = useState<string>();
  const range = rangeOf(view, anchor);
  const calendar = usePolling(
    () => client.getCalendar({ from: range.start.toISOString(), to: range.end.toISOString() }),
    `${range.start.toISOString()}/${range.end.toISOString()}`,
    10_000,
  );

  const today = () => setAnchor(startOfDay(new Date()));
  const move = (direction: -1 | 1) => setAnchor(step(view, anchor, direction));
  function onKeyDown(event: KeyboardEvent) {
    const target = event.target as HTMLElement;
    if (["INPUT", "SELECT", "TEXTAREA"].includes(target.tagName)) return;
    if (event.key === "PageUp") move(-1);
    else if (event.key === "PageDown") move(1);
    else if (event.key === "Home") today();
    else return;
    event.preventDefault();
  }
  function jump() {
    const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(goTo);
    if (!match) {
      setGoToError(t.calGoToInvalid);
      return;
    }
    setGoToError(undefined);
    setAnchor(new Date(Number(match[1]), Number(match[2]) - 1, Number(match[3])));
  }

  const title =
    view === "week"
      ? new Intl.DateTimeFormat(t.locale, { day: "numeric", month: "long", year: "numeric" }).formatRange(
          range.start,
          new Date(range.end.getTime() - 1),
        )
      : new Intl.DateTimeFormat(t.locale, { month: "long", year: "numeric" }).format(anchor);
  const days = byDay(calendar.data?.items ?? []);
  const todayKey = dayKey(new Date());
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: the keys are shortcuts of the buttons below, which stay the way in
    <div className="cal" onKeyDown={onKeyDown}>
      <h1>{t.calTitle}</h1>
      <div className="cal-toolbar">
        <fieldset className="cal-views">
          <legend>{t.calView}</legend>
          {VIEWS.map((name) => (
            <button key={name} type="button" aria-pressed={view === name} onClick={() => setView(name)}>
              {t.calViews[name]}
            </button>
          ))}
        </fieldset>
        <div className="cal-nav">
          <button type="button" onClick={() => move(-1)} aria-keyshortcuts="PageUp">
            {view === "week" ? t.calPreviousWeek : t.calPreviousMonth}
          </button>
          <button type="button" onClick={today} aria-keyshortcuts="Home">
            {t.calToday}
          </button>
          <button type="button" onClick={() => move(1)} aria-keyshortcuts="PageDown">
            {view === "week" ? t.calNextWeek : t.calNextMonth}
          </button>
        </div>
        <form
          className="cal-goto"
          onSubmit={(event) => {
            event.preventDefault();
            jump();
          }}
        >
          <label>
            {t.calGoTo}
            <input
              type="date"
              value={goTo}
              onChange={(event) => setGoTo(event.target.value)}
              aria-invalid={goToError ? true : undefined}
              aria-describedby={goToError ? "cal-goto-error" : undefined}
            />
          </label>
          <button type="submit">{t.calGo}</button>
          {goToError && (
            <p id="cal-goto-error" role="alert" className="field-error">
              {goToError}
            </p>
          )}
        </form>
      </div>
      <h2 className="cal-range" aria-live="polite">
        {title}
      </h2>
      <p className="cal-help">{t.calKeys}</p>
      {calendar.error && <p role="alert">{calendar.error.message}</p>}
      {calendar.data?.truncated && <p className="cal-truncated">{t.calTruncated}</p>}
      {view === "month" && (
        <MonthView
          range={range}
          days={days}
          today={todayKey}
          month={anchor.getMonth()}
          onMore={(day) => {
            setView("week");
            setAnchor(day);
          }}
        />
      )}
      {view === "week" && <WeekView range={range} days={days} today={todayKey} />}
      {view === "list" && calendar.data && <ListView range={range} days={days} today={todayKey} />}
    </div>
  );
}
