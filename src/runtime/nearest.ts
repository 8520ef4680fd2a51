/** Names longer than this are not compared (the unknown name is the caller's text). */
const MAX_NAME = 64;
/** At most this many known names are compared per lookup. */
const MAX_CANDIDATES = 512;

/** Levenshtein distance of two short strings, case-insensitively; stops early above `limit`. */
function distance(a: string, b: string, limit: number): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  if (Math.abs(x.length - y.length) > limit) return limit + 1;
  let prev = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      best = Math.min(best, row[j]!);
    }
    if (best > limit) return limit + 1;
    prev = row;
  }
  return prev[y.length]!;
}

/**
 * The known names nearest to an unknown one (a typo, a wrong case, a letter missing), at most
 * three, best first; none when nothing is close (within a third of the name's length, at least 2).
 * Bounded: a name over 64 characters, or candidates past the first 512, are not compared.
 */
export function nearestNames(name: string, known: Iterable<string>): string[] {
  if (name.length === 0 || name.length > MAX_NAME) return [];
  const limit = Math.max(2, Math.floor(name.length / 3));
  const scored: [number, string][] = [];
  let seen = 0;
  for (const k of known) {
    if (++seen > MAX_CANDIDATES) break;
    if (k.length > MAX_NAME) continue;
    const d = distance(name, k, limit);
    if (d <= limit) scored.push([d, k]);
  }
  return scored.sort((p, q) => p[0] - q[0] || (p[1] < q[1] ? -1 : 1)).slice(0, 3).map((s) => s[1]);
}

/** ` (did you mean A or B?)`, or "" without suggestions. */
export function didYouMean(names: readonly string[]): string {
  if (names.length === 0) return "";
  return ` (did you mean ${names.length === 1 ? names[0] : `${names.slice(0, -1).join(", ")} or ${names[names.length - 1]}`}?)`;
}
