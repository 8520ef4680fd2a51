/**
 * The wall clock (epoch ms) that time-based behaviour reads: a provider's warm-up, outlier
 * ejection and back-off, the default logger's repeat window. Production reads Date.now(); tests
 * pass a clock they move by hand instead of sleeping. Keep it one method: a hot path reads it.
 */
export interface Clock {
  now(): number;
}

/** Date.now(). */
export const systemClock: Clock = { now: () => Date.now() };
