import type { Lang } from "../i18n.ts";

// Times as a person reads them: the date and time in the page's language, and how far from now.

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ["day", 86_400_000],
  ["hour", 3_600_000],
  ["minute", 60_000],
  ["second", 1_000],
];

/** "12/05/2026, 14:30 (in 5 minutes)"; `nowMs` is injectable for a stable display between renders. */
export function formatWhen(iso: string, lang: Lang, nowMs = Date.now()): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  return `${formatDate(ms, lang)} (${relative(ms - nowMs, lang)})`;
}

export function formatDate(ms: number, lang: Lang): string {
  return new Intl.DateTimeFormat(lang, { dateStyle: "medium", timeStyle: "short" }).format(ms);
}

function relative(deltaMs: number, lang: Lang): string {
  const format = new Intl.RelativeTimeFormat(lang, { numeric: "auto" });
  for (const [unit, size] of UNITS) {
    if (Math.abs(deltaMs) >= size || unit === "second") return format.format(Math.round(deltaMs / size), unit);
  }
  return "";
}

/** 5400 → "1h30m": the interval in the form people type it (scheduler/interval.ts reads it back). */
export function formatSeconds(total: number): string {
  const parts: string[] = [];
  let rest = total;
  for (const [unit, size] of [
    ["d", 86_400],
    ["h", 3600],
    ["m", 60],
    ["s", 1],
  ] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  return parts.join("") || "0s";
}
