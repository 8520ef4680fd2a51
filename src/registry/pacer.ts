/** Something with subscriptions waiting to be started. */
export interface Starter {
  /** Starts one waiting subscription; false when none was waiting (it is then forgotten). */
  startNext(): boolean;
}

/**
 * Spreads the start of subscriptions over time: at most `perWindow` in each `windowMs`, taken
 * round-robin from every starter waiting (so one interface's long mapping does not hold back the
 * others). A start costs a few ZooKeeper requests and their replies, and each reply a
 * notification: started all at once, hundreds of them hold the event loop.
 */
export class Pacer {
  private readonly waiting = new Set<Starter>();
  private timer: NodeJS.Timeout | undefined;
  private windowStart = 0;
  private used = 0;

  constructor(
    private readonly perWindow: number,
    private readonly windowMs: number,
  ) {}

  /** `starter` has subscriptions to start: they start now as far as the window allows, the rest later. */
  request(starter: Starter): void {
    this.waiting.add(starter);
    this.pump();
  }

  /** Forgets a starter (closed). */
  cancel(starter: Starter): void {
    this.waiting.delete(starter);
  }

  private pump(): void {
    if (this.timer) return;
    const now = Date.now();
    if (now - this.windowStart >= this.windowMs) {
      this.windowStart = now;
      this.used = 0;
    }
    while (this.used < this.perWindow && this.waiting.size > 0) {
      for (const s of this.waiting) {
        if (this.used >= this.perWindow) break;
        if (s.startNext()) this.used++;
        else this.waiting.delete(s);
      }
    }
    if (this.waiting.size === 0) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.pump();
      },
      Math.max(1, this.windowStart + this.windowMs - now),
    );
    this.timer.unref();
  }
}
