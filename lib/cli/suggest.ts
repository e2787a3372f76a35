/**
 * The number of single-character edits (insert, delete, replace, swap two neighbours) that
 * turn `a` into `b`: optimal string alignment distance.
 */
export function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number) => rows[i]?.[j] ?? Number.POSITIVE_INFINITY;
  for (let i = 1; i <= a.length; i++) {
    const row = rows[i] ?? [];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, at(i - 2, j - 2) + 1);
      }
      row[j] = best;
    }
  }
  return at(a.length, b.length);
}

/**
 * The candidate nearest to what was typed, if it is near enough to be a typo: at most one edit
 * for short words, and one more for every three characters beyond that.
 */
export function nearest(typed: string, candidates: readonly string[]): string | undefined {
  const word = typed.replace(/^-+/, '').toLowerCase();
  const limit = Math.max(1, Math.floor(word.length / 3));
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(word, candidate.replace(/^-+/, '').toLowerCase());
    if (distance <= limit && (!best || distance < best.distance)) best = { candidate, distance };
  }
  return best?.candidate;
}

/** ` (did you mean X?)` when a candidate is near, otherwise nothing. */
export function didYouMean(typed: string, candidates: readonly string[]): string {
  const match = nearest(typed, candidates);
  return match === undefined ? '' : ` (did you mean ${match}?)`;
}
