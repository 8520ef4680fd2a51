/**
 * The wall clock (epoch ms) that time-based policy reads: a provider's warm-up, outlier ejection
 * and back-off, the default logger's repeat window, the server's report of refused connections.
 * The `clock` option of createClient and createServer; Date.now() by default; tests pass a clock
 * they move by hand instead of sleeping. Keep it one method: a hot path reads it. Deadlines and
 * timeouts never read it (a clock moved by hand fires no timer).
 */
export interface Clock {
  now(): number;
}

/** Date.now(). */
export const systemClock: Clock = { now: () => Date.now() };
