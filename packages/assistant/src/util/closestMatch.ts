// "Did you mean": the known name nearest to what a person typed, for the errors that refuse a typo instead of
// silently making something new (a route category, an environment variable, a task type).

/** The candidate closest to `typed` (edit distance, a swap of two neighbours counting one), if any is close enough. */
export function closestMatch(typed: string, candidates: readonly string[]): string | undefined {
  const wanted = typed.toLowerCase();
  let best: { name: string; distance: number } | undefined;
  for (const name of candidates) {
    // Compared after the prefix they share, so a long common prefix (ASSISTANT_) does not make far names look near.
    const other = name.toLowerCase();
    let shared = 0;
    while (shared < wanted.length && wanted[shared] === other[shared]) shared++;
    const rest = wanted.slice(shared);
    const otherRest = other.slice(shared);
    const distance = editDistance(rest, otherRest);
    if (distance >= Math.max(rest.length, otherRest.length)) continue; // nothing in common beyond the prefix
    // About one typo in three letters, at least 2: "conversaton" finds conversation, "ZZZ" finds nothing.
    const limit = Math.max(2, Math.floor(rest.length / 3));
    if (distance <= limit && (!best || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}

/** ` (did you mean "x"?)`, or nothing: appended to a refusal. */
export function didYouMean(typed: string, candidates: readonly string[]): string {
  const match = closestMatch(typed, candidates);
  return match === undefined ? "" : ` (did you mean "${match}"?)`;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps cost 1. */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = d;
    }
  }
  return rows[a.length]![b.length]!;
}
