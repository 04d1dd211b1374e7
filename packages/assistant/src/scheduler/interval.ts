// The interval of a schedule as people type it, shared by `assistant schedule create` and the chat's `/schedule`:
// whole seconds (`3600`) or a duration in units (`90s`, `30m`, `1h`, `2d`, combined as `1h30m`).

const UNIT_SECS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

export const INTERVAL_FORMS = "seconds (3600) or a duration such as 90s, 30m, 1h, 1h30m or 2d";

/** The interval in seconds, or undefined when `text` is not one of INTERVAL_FORMS. */
export function parseInterval(text: string): number | undefined {
  const typed = text.trim().toLowerCase();
  if (/^\d+$/.test(typed)) return Number(typed);
  if (!/^(\d+[smhd])+$/.test(typed)) return undefined;
  let total = 0;
  for (const [, amount, unit] of typed.matchAll(/(\d+)([smhd])/g)) total += Number(amount) * UNIT_SECS[unit!]!;
  return total;
}

/** The sentence for an interval that is none of the forms. */
export function intervalProblem(text: string): string {
  return `the interval must be ${INTERVAL_FORMS} (got "${text}")`;
}
