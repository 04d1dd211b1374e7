import type { CalendarItem } from "@assistant/client";
import { useMessages } from "../i18n.ts";
import { CalendarEntry } from "./CalendarEntry.tsx";
import { dayKey, daysOf, type Range } from "./range.ts";

// The three views of the Calendar tab over the same entries: a month grid, a week of days, and a plain list of
// the days that have entries (for screen readers and small screens).

/** Entries a month cell shows before "+N more" (which opens that week). */
const MONTH_CELL_ENTRIES = 3;

interface ViewProps {
  range: Range;
  days: Map<string, CalendarItem[]>;
  today: string;
}

export function MonthView({
  range,
  days,
  today,
  month,
  onMore,
}: ViewProps & { month: number; onMore: (day: Date) => void }) {
  const t = useMessages();
  const all = daysOf(range);
  const weeks = Array.from({ length: all.length / 7 }, (_, i) => all.slice(i * 7, i * 7 + 7));
  const weekday = new Intl.DateTimeFormat(t.locale, { weekday: "short" });
  const long = new Intl.DateTimeFormat(t.locale, { weekday: "long", day: "numeric", month: "long" });
  return (
    <table className="cal-month" aria-label={t.calMonthView}>
      <thead>
        <tr>
          {weeks[0]!.map((day) => (
            <th key={day.getDay()} scope="col" className="cal-weekday">
              {weekday.format(day)}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {weeks.map((week) => (
          <tr key={dayKey(week[0]!)}>
            {week.map((day) => {
              const key = dayKey(day);
              const items = days.get(key) ?? [];
              const hidden = items.length - MONTH_CELL_ENTRIES;
              return (
                <td
                  key={key}
                  className={day.getMonth() === month ? "cal-cell" : "cal-cell cal-other-month"}
                  aria-current={key === today ? "date" : undefined}
                >
                  <span className="cal-day" aria-hidden="true">
                    {day.getDate()}
                  </span>
                  <span className="visually-hidden">{long.format(day)}</span>
                  {items.length > 0 && (
                    <ul aria-label={long.format(day)}>
                      {items.slice(0, MONTH_CELL_ENTRIES).map((item) => (
                        <li key={`${item.kind}-${item.ref_id}-${item.at}`}>
                          <CalendarEntry item={item} />
                        </li>
                      ))}
                    </ul>
                  )}
                  {hidden > 0 && (
                    <button type="button" className="cal-more" onClick={() => onMore(day)}>
                      {t.calMore(hidden)}
                    </button>
                  )}
                </td>
              );
            })}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function WeekView({ range, days, today }: ViewProps) {
  const t = useMessages();
  const long = new Intl.DateTimeFormat(t.locale, { weekday: "long", day: "numeric", month: "long" });
  return (
    <ol className="cal-week" aria-label={t.calWeekView}>
      {daysOf(range).map((day) => {
        const key = dayKey(day);
        const items = days.get(key) ?? [];
        return (
          <li key={key} aria-current={key === today ? "date" : undefined}>
            <h2 className="cal-week-day">{long.format(day)}</h2>
            {items.length === 0 ? (
              <p className="empty">{t.calNothing}</p>
            ) : (
              <ul aria-label={long.format(day)}>
                {items.map((item) => (
                  <li key={`${item.kind}-${item.ref_id}-${item.at}`}>
                    <CalendarEntry item={item} />
                  </li>
                ))}
              </ul>
            )}
          </li>
        );
      })}
    </ol>
  );
}

export function ListView({ range, days, today }: ViewProps) {
  const t = useMessages();
  const long = new Intl.DateTimeFormat(t.locale, { weekday: "long", day: "numeric", month: "long", year: "numeric" });
  const shown = daysOf(range).filter((day) => days.has(dayKey(day)));
  if (shown.length === 0) return <p className="empty">{t.calEmpty}</p>;
  return (
    <div className="cal-list">
      {shown.map((day) => {
        const key = dayKey(day);
        return (
          <section key={key} aria-labelledby={`cal-list-${key}`}>
            <h2 id={`cal-list-${key}`}>
              {long.format(day)}
              {key === today && ` (${t.calToday})`}
            </h2>
            <ul>
              {days.get(key)!.map((item) => (
                <li key={`${item.kind}-${item.ref_id}-${item.at}`}>
                  <CalendarEntry item={item} />{" "}
                  <span className="cal-kind">
                    {t.calKind[item.kind]} ·{" "}
                    {item.status
                      ? (t.taskStatus[item.status as keyof typeof t.taskStatus] ?? item.status)
                      : t.calUpcoming}
                  </span>
                </li>
              ))}
            </ul>
          </section>
        );
      })}
    </div>
  );
}
