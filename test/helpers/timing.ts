// Ratios to a baseline measured in the same test, in place of wall-clock bounds: a loaded machine
// slows the hostile input and its benign twin alike, so their ratio holds where `ms < 1500` fails.
// Must not change: rounds alternate the two and keep each one's fastest; the baseline is floored.
import * as assert from "node:assert/strict";

/** What {@link compare} measured, ms (fastest of the rounds). */
export interface Comparison {
  readonly subject: number;
  readonly baseline: number;
}

async function timed(fn: () => unknown): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

/**
 * Times `subject` and `baseline` alternately, `rounds` times each, and keeps each one's fastest
 * (the run least disturbed by other processes). The baseline is floored at `floorMs`, so a
 * baseline of a millisecond or two does not turn scheduling noise into a ratio.
 */
async function compare(subject: () => unknown, baseline: () => unknown, rounds = 3, floorMs = 5): Promise<Comparison> {
  let s = Infinity;
  let b = Infinity;
  for (let i = 0; i < rounds; i++) {
    s = Math.min(s, await timed(subject));
    b = Math.min(b, await timed(baseline));
  }
  return { subject: s, baseline: Math.max(b, floorMs) };
}

/**
 * Asserts `subject` costs less than `factor` times `baseline` (see {@link compare}); the message
 * names both figures and what was compared.
 */
export async function assertWithin(
  factor: number,
  what: string,
  subject: () => unknown,
  baseline: () => unknown,
  rounds = 3,
  floorMs = 5,
): Promise<Comparison> {
  const c = await compare(subject, baseline, rounds, floorMs);
  // BOUNDS_FIGURES=1 in the environment prints the figures (to stderr).
  if (process.env.BOUNDS_FIGURES) console.error(`${what}: ${c.subject.toFixed(1)} ms, baseline ${c.baseline.toFixed(1)} ms`);
  assert.ok(c.subject < factor * c.baseline, `${what}: ${c.subject.toFixed(1)} ms against a baseline of ${c.baseline.toFixed(1)} ms (bound ${factor}x)`);
  return c;
}
