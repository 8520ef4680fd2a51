/**
 * The request stream a client- or bidi-streaming handler iterates. Messages arrive from the
 * transport faster or slower than the handler reads them; when too many wait, `onPressure(true)`
 * asks the transport to stop reading (so HTTP/2 flow control pushes back on the client), and
 * `onPressure(false)` resumes once the handler caught up.
 */
export class MessageQueue<T> implements AsyncIterableIterator<T> {
  private items: T[] = [];
  private sizes: number[] = [];
  private head = 0;
  private bytes = 0;
  private paused = false;
  private closed = false;
  private ended = false;
  private error: unknown;
  private waiter: { resolve: (r: IteratorResult<T>) => void; reject: (e: unknown) => void } | undefined;

  constructor(
    private readonly onPressure: (pause: boolean) => void,
    private readonly maxMessages = 8,
    private readonly maxBytes = 1024 * 1024,
  ) {}

  /** Number of messages waiting for the handler. */
  get length(): number {
    return this.items.length - this.head;
  }

  /** Adds a message of `size` bytes. */
  push(value: T, size: number): void {
    if (this.closed || this.ended) return;
    const w = this.waiter;
    if (w) {
      this.waiter = undefined;
      w.resolve({ value, done: false });
      return;
    }
    this.items.push(value);
    this.sizes.push(size);
    this.bytes += size;
    if (!this.paused && (this.length >= this.maxMessages || this.bytes >= this.maxBytes)) {
      this.paused = true;
      this.onPressure(true);
    }
  }

  /** The client half-closed: the handler sees the end after the waiting messages. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.waiter && this.length === 0) {
      const w = this.waiter;
      this.waiter = undefined;
      w.resolve({ value: undefined, done: true });
    }
  }

  /** The request failed (bad message, cancellation): the handler's next read throws `err`. */
  fail(err: unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.error = err;
    this.items = [];
    this.sizes = [];
    this.head = 0;
    this.bytes = 0;
    const w = this.waiter;
    if (w) {
      this.waiter = undefined;
      w.reject(err);
    }
  }

  next(): Promise<IteratorResult<T>> {
    if (this.length > 0) {
      const value = this.items[this.head];
      this.bytes -= this.sizes[this.head];
      // Drop references as we go; compact now and then instead of shifting every time.
      (this.items as unknown[])[this.head] = undefined;
      this.head++;
      if (this.head > 64 && this.head * 2 > this.items.length) {
        this.items = this.items.slice(this.head);
        this.sizes = this.sizes.slice(this.head);
        this.head = 0;
      }
      if (this.paused && this.length <= this.maxMessages >> 1 && this.bytes < this.maxBytes >> 1) {
        this.paused = false;
        this.onPressure(false);
      }
      return Promise.resolve({ value, done: false });
    }
    if (this.error !== undefined) return Promise.reject(this.error);
    if (this.ended || this.closed) return Promise.resolve({ value: undefined, done: true });
    if (this.waiter) return Promise.reject(new Error("the request stream is already being read"));
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  /** The handler stopped reading (`break` in `for await`): later messages are dropped. */
  return(): Promise<IteratorResult<T>> {
    this.closed = true;
    this.items = [];
    this.sizes = [];
    this.head = 0;
    this.bytes = 0;
    if (this.paused) {
      this.paused = false;
      this.onPressure(false);
    }
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}
