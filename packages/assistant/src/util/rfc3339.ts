// RFC 3339 timestamps as query parameters (`since`): a date, a time and a zone (Z or an offset) are required, and
// the written date must exist (2026-02-30 is refused instead of rolling over to March).

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** Epoch milliseconds of an RFC 3339 timestamp; null when it is not one or names no real time. */
export function parseRfc3339(value: string): number | null {
  if (!RFC3339.test(value)) return null;
  const ms = Date.parse(value.replace(" ", "T"));
  if (Number.isNaN(ms)) return null;
  const offset = /([+-])(\d{2}):(\d{2})$/.exec(value);
  const shift = offset ? (offset[1] === "-" ? -1 : 1) * (Number(offset[2]) * 60 + Number(offset[3])) * 60_000 : 0;
  return new Date(ms + shift).toISOString().slice(0, 10) === value.slice(0, 10) ? ms : null;
}
