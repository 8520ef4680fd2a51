/** Names longer than this are not compared (the unknown name is the caller's text). */
const MAX_NAME = 48;
/** At most this many known names are compared per lookup. */
const MAX_CANDIDATES = 200;
/** At most this many cells of the distance tables per lookup (~80 µs at worst): a 404 stays cheap. */
const MAX_CELLS = 8_000;

/** Two rows of the distance table, reused by every comparison. */
const rows = [new Int32Array(MAX_NAME + 1), new Int32Array(MAX_NAME + 1)] as const;

/** Levenshtein distance of two short lower-case strings; stops early above `limit`. */
function distance(x: string, y: string, limit: number): number {
  let prev = rows[0];
  let row = rows[1];
  for (let j = 0; j <= y.length; j++) prev[j] = j;
  for (let i = 1; i <= x.length; i++) {
    row[0] = i;
    let best = i;
    const c = x.charCodeAt(i - 1);
    for (let j = 1; j <= y.length; j++) {
      const v = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (c === y.charCodeAt(j - 1) ? 0 : 1));
      row[j] = v;
      if (v < best) best = v;
    }
    if (best > limit) return limit + 1;
    [prev, row] = [row, prev];
  }
  return prev[y.length]!;
}

/**
 * The known names nearest to an unknown one (a typo, a wrong case, a letter missing), at most
 * three, best first; none when nothing is close (within a third of the name's length, at least 2).
 * Bounded: a name over 48 characters, candidates past the first 200, or past 8,000 table cells
 * in all, are not compared (an unknown name is the caller's text, and a 404 must stay cheap).
 */
export function nearestNames(name: string, known: Iterable<string>): string[] {
  if (name.length === 0 || name.length > MAX_NAME) return [];
  const limit = Math.max(2, Math.floor(name.length / 3));
  const lower = name.toLowerCase();
  const scored: [number, string][] = [];
  let seen = 0;
  let cells = MAX_CELLS;
  for (const k of known) {
    if (++seen > MAX_CANDIDATES) break;
    if (k.length > MAX_NAME || Math.abs(k.length - name.length) > limit) continue;
    cells -= name.length * k.length;
    if (cells < 0) break;
    const d = distance(lower, k.toLowerCase(), limit);
    if (d <= limit) scored.push([d, k]);
  }
  return scored
    .sort((p, q) => p[0] - q[0] || (p[1] < q[1] ? -1 : 1))
    .slice(0, 3)
    .map((s) => s[1]);
}

/** ` (did you mean A or B?)`, or "" without suggestions. */
export function didYouMean(names: readonly string[]): string {
  if (names.length === 0) return "";
  return ` (did you mean ${names.length === 1 ? names[0] : `${names.slice(0, -1).join(", ")} or ${names[names.length - 1]}`}?)`;
}
