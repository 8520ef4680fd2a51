/**
 * The response messages of a streaming call as an async iterator: the transport pushes, the
 * caller pulls. `onSize` lets the transport pause reading while the caller lags behind, and
 * `onReturn` cancels the call when the caller stops iterating early.
 */
export class MessageQueue<T> implements AsyncIterableIterator<T> {
  private items: T[] = [];
  private head = 0;
  private state: "open" | "ended" | "failed" = "open";
  private error: unknown;
  private waiter: { resolve(r: IteratorResult<T>): void; reject(e: unknown): void } | undefined;
  /** Messages received so far. */
  received = 0;

  constructor(
    private readonly onSize: (buffered: number) => void = () => {},
    private readonly onReturn: () => void = () => {},
  ) {}

  /** Messages waiting to be pulled. */
  get buffered(): number {
    return this.items.length - this.head;
  }

  /** True once the stream ended or failed. */
  get closed(): boolean {
    return this.state !== "open";
  }

  push(value: T): void {
    if (this.state !== "open") return;
    this.received++;
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = undefined;
      w.resolve({ value, done: false });
      return;
    }
    this.items.push(value);
    this.onSize(this.buffered);
  }

  end(): void {
    if (this.state !== "open") return;
    this.state = "ended";
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = undefined;
      w.resolve({ value: undefined, done: true });
    }
  }

  fail(error: unknown): void {
    if (this.state !== "open") return;
    this.state = "failed";
    this.error = error;
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = undefined;
      w.reject(error);
    }
  }

  next(): Promise<IteratorResult<T>> {
    if (this.head < this.items.length) {
      const value = this.items[this.head++];
      if (this.head === this.items.length) {
        this.items = [];
        this.head = 0;
      }
      this.onSize(this.buffered);
      return Promise.resolve({ value, done: false });
    }
    if (this.state === "ended") return Promise.resolve({ value: undefined, done: true });
    if (this.state === "failed") return Promise.reject(this.error);
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  return(): Promise<IteratorResult<T>> {
    if (this.state === "open") {
      this.state = "ended";
      this.items = [];
      this.head = 0;
      this.onReturn();
    }
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }
}
