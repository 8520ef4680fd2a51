// The one bounded wait of the tests: poll a condition instead of sleeping a fixed time.

/** Waits until `cond()` is true, polling every 20 ms; fails after `ms`, naming `what`. */
export async function waitFor(cond: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
