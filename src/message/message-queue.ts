/** Where a {@link MessageQueue} sits in its life. */
type QueueState = "open" | "ended" | "failed" | "returned";

/** How much a {@link MessageQueue} holds before it asks its producer to pause. */
export interface QueueBounds {
  /** Pause at this many waiting messages. */
  readonly maxMessages: number;
  /** Pause at this many waiting bytes (a few large messages fill it before many small ones). */
  readonly maxBytes: number;
}

/** The server's request streams: handlers usually keep up, and HTTP/2 flow control does the rest. */
const SERVER_QUEUE_BOUNDS: QueueBounds = { maxMessages: 8, maxBytes: 1024 * 1024 };
/** The client's response streams: callers read in bursts, so a little more slack. */
export const CLIENT_QUEUE_BOUNDS: QueueBounds = { maxMessages: 32, maxBytes: 4 * 1024 * 1024 };

/**
 * The messages of a stream as an async iterator: the transport pushes, the consumer (a handler
 * reading its request stream, a caller reading responses) pulls. Bounded by messages *and*
 * bytes: when either bound is reached, `onPressure(true)` asks the transport to stop reading, so
 * HTTP/2 flow control pushes back on the peer; once the consumer has taken it to half the
 * messages or fewer and below half the bytes, `onPressure(false)` resumes. `onReturn` runs when the consumer stops early (`break`).
 */
export class MessageQueue<T> implements AsyncIterableIterator<T> {
  private items: T[] = [];
  private sizes: number[] = [];
  private head = 0;
  private bytes = 0;
  private paused = false;
  private state: QueueState = "open";
  private error: unknown = undefined;
  private waiter: { resolve: (r: IteratorResult<T>) => void; reject: (e: unknown) => void } | undefined;

  constructor(
    private readonly onPressure: (pause: boolean) => void,
    private readonly bounds: QueueBounds = SERVER_QUEUE_BOUNDS,
    private readonly onReturn: () => void = () => {},
  ) {}

  /** Messages waiting for the consumer. */
  get length(): number {
    return this.items.length - this.head;
  }

  /** Bytes waiting for the consumer. */
  get bufferedBytes(): number {
    return this.bytes;
  }

  /** True once the stream ended, failed or the consumer stopped: nothing more is accepted. */
  get settled(): boolean {
    return this.state !== "open";
  }

  /** Adds a message of `size` bytes (ignored once the queue is settled). */
  push(value: T, size: number): void {
    if (this.state !== "open") return;
    const w = this.waiter;
    if (w) {
      this.waiter = undefined;
      w.resolve({ value, done: false });
      return;
    }
    this.items.push(value);
    this.sizes.push(size);
    this.bytes += size;
    if (!this.paused && (this.length >= this.bounds.maxMessages || this.bytes >= this.bounds.maxBytes)) {
      this.paused = true;
      this.onPressure(true);
    }
  }

  /** The stream ended: the consumer sees the end after the waiting messages. */
  end(): void {
    if (this.state !== "open") return;
    this.state = "ended";
    if (this.waiter && this.length === 0) this.settleWaiter({ value: undefined, done: true });
  }

  /** The stream failed: the consumer gets the waiting messages, then `err`. */
  fail(err: unknown): void {
    if (this.state !== "open") return;
    this.state = "failed";
    this.error = err;
    if (this.waiter) this.settleWaiter(undefined, err);
  }

  /**
   * The call is over (cancelled, timed out): waiting messages are dropped and the next read throws
   * `err`, also when the peer had already ended the stream.
   */
  abort(err: unknown): void {
    if (this.state !== "open" && this.state !== "ended") return;
    this.clear();
    this.state = "failed";
    this.error = err;
    if (this.waiter) this.settleWaiter(undefined, err);
  }

  next(): Promise<IteratorResult<T>> {
    if (this.length > 0) return Promise.resolve({ value: this.take(), done: false });
    if (this.state === "failed") return Promise.reject(this.error);
    if (this.state !== "open") return Promise.resolve({ value: undefined, done: true });
    if (this.waiter) return Promise.reject(new Error("the stream is already being read"));
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  /** The consumer stopped reading (`break` in `for await`): later messages are dropped. */
  return(): Promise<IteratorResult<T>> {
    if (this.state === "open") {
      this.state = "returned";
      this.clear();
      this.onReturn();
    }
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  private take(): T {
    const value = this.items[this.head];
    this.bytes -= this.sizes[this.head];
    // Drop references as we go; compact now and then instead of shifting every time.
    (this.items as unknown[])[this.head] = undefined;
    this.head++;
    if (this.head === this.items.length) {
      this.items = [];
      this.sizes = [];
      this.head = 0;
    } else if (this.head > 64 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.sizes = this.sizes.slice(this.head);
      this.head = 0;
    }
    const { maxMessages, maxBytes } = this.bounds;
    if (this.paused && this.length <= maxMessages >> 1 && this.bytes < maxBytes >> 1) {
      this.paused = false;
      this.onPressure(false);
    }
    return value;
  }

  private clear(): void {
    this.items = [];
    this.sizes = [];
    this.head = 0;
    this.bytes = 0;
    if (this.paused) {
      this.paused = false;
      this.onPressure(false);
    }
  }

  private settleWaiter(result: IteratorResult<T> | undefined, err?: unknown): void {
    const w = this.waiter!;
    this.waiter = undefined;
    if (result) w.resolve(result);
    else w.reject(err);
  }
}
