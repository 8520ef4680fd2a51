// The one bounded wait of the tests: poll a condition instead of sleeping a fixed time.

/** Waits until `cond()` is true, polling every 20 ms; fails after `ms`, naming `what`. */
export async function waitFor(cond: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Waits until `read()` stops changing — the same value on `polls` polls 20 ms apart, 200 ms by
 * default (a flow held back by backpressure, a queue drained) — and returns it; fails after `ms`,
 * naming `what`.
 */
export async function settled<T>(read: () => T, ms: number, what: string, polls = 10): Promise<T> {
  const deadline = Date.now() + ms;
  let last = read();
  for (let same = 0; same < polls; ) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what} to settle (last ${String(last)})`);
    await new Promise((r) => setTimeout(r, 20));
    const now = read();
    same = Object.is(now, last) ? same + 1 : 0;
    last = now;
  }
  return last;
}
