// Owns `FetchExchange`. One fetch-API request and its response as an Exchange, HTTP/1.1-style: a
// complete response (`respond`) or a streamed body (`start` / `write` / `end`), never trailers …
// Must not change: the host framework's contract: a request that is not ours goes on untouched.
import { Readable } from "node:stream";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import { type AbortSink, type BodySink, chainAbortSink, type Exchange, type OutHeaders, type Peer } from "../transport/server/exchange.js";

const NO_PEER: Peer = Object.freeze({ address: "", port: 0 });
const EMPTY_HEADERS: Readonly<Record<string, undefined>> = Object.freeze(Object.create(null));
/** Response headers a fetch `Response` computes itself (or refuses). */
const HOP_BY_HOP = new Set(["content-length", "connection", "transfer-encoding", "keep-alive"]);
/** How many written chunks a streamed response queues before `write` asks to wait for the reader. */
const QUEUED_CHUNKS = 16;

function toHeaders(out: OutHeaders): Headers {
  const h = new Headers();
  for (const [k, v] of Object.entries(out)) {
    if (v === undefined || k.startsWith(":") || HOP_BY_HOP.has(k.toLowerCase())) continue;
    if (Array.isArray(v)) for (const one of v) h.append(k, one);
    else h.set(k, String(v));
  }
  return h;
}

/**
 * One fetch-API request and its response as an {@link Exchange}, HTTP/1.1-style: a complete
 * response (`respond`) or a streamed body (`start` / `write` / `end`), never trailers (gRPC-Web
 * and Connect carry theirs in the body). The response is {@link response}, settled once the
 * call answers.
 */
export class FetchExchange implements Exchange {
  readonly httpVersion = "1.1" as const;
  readonly method: string;
  readonly path: string;
  readonly query: string | undefined;
  headers: Record<string, string | undefined>;
  readonly headerCount: number;
  readonly peer: Peer = NO_PEER;
  /** The answer, once the call gives one. */
  readonly response: Promise<Response>;
  private resolve!: (r: Response) => void;
  private sent = false;
  private done = false;
  private abortSink: AbortSink | undefined;
  private abortedFlag = false;
  private stream: ReadableStreamDefaultController<Uint8Array> | undefined;
  private drainWaiters: (() => void)[] = [];
  private readable: Readable | undefined;
  /** The request headers as they came (`headers` may be released), for the answer to an abort. */
  private readonly requestHeaders: Record<string, string | undefined>;

  constructor(
    private readonly request: Request,
    path: string,
    /** Answers a request whose signal aborted before it was answered (the protocol's `cancelled`). */
    private readonly answerAbort?: (ex: FetchExchange) => void,
  ) {
    this.method = request.method;
    const url = new URL(request.url);
    this.path = path;
    this.query = url.search.length > 1 ? url.search.slice(1) : undefined;
    const headers: Record<string, string> = Object.create(null);
    let n = 0;
    request.headers.forEach((v, k) => {
      headers[k] = v;
      n++;
    });
    this.headers = headers;
    this.requestHeaders = headers;
    this.headerCount = n;
    this.response = new Promise((r) => {
      this.resolve = r;
    });
    const signal = request.signal;
    // Aborted already: once the call has started (dispatch is synchronous), as if it aborted then.
    if (signal?.aborted) queueMicrotask(() => this.abort());
    else signal?.addEventListener("abort", () => this.abort(), { once: true });
  }

  get body(): Readable {
    if (this.readable === undefined) {
      const b = this.request.body;
      this.readable = b ? Readable.fromWeb(b as unknown as NodeReadableStream<Uint8Array>) : Readable.from([]);
      this.readable.on("error", () => {});
    }
    return this.readable;
  }

  get headersSent(): boolean {
    return this.sent;
  }
  get aborted(): boolean {
    return this.abortedFlag;
  }

  /**
   * The request's signal aborted, or the reader cancelled the streamed response: the call is told
   * (its handler's signal fires), the request body is cancelled (a stalled one would keep its
   * reader waiting), and the response promise settles: with the protocol's `cancelled` answer
   * when none was given yet (a runtime discards it, the client being gone), else the streamed
   * body ends with an error.
   */
  private abort(): void {
    if (this.abortedFlag || this.done) return;
    this.abortedFlag = true;
    this.abortSink?.onExchangeAbort();
    this.discardBody();
    if (!this.sent) {
      this.headers = this.requestHeaders;
      this.answerAbort?.(this);
      // Whatever the answer did, the promise settles.
      this.respond(499, {});
      return;
    }
    this.done = true;
    try {
      this.stream?.error(new Error("the request was aborted"));
    } catch {
      // the reader cancelled: already closed
    }
  }

  onAbort(fn: (() => void) | AbortSink): void {
    this.abortSink = chainAbortSink(this.abortSink, fn);
  }

  readBody(sink: BodySink): void {
    const b = this.body;
    b.on("data", (c: Buffer) => sink.onBodyData(c));
    b.on("end", () => sink.onBodyEnd());
    b.on("error", () => sink.onBodyError());
  }

  releaseHeaders(): void {
    this.headers = EMPTY_HEADERS;
  }

  respond(status: number, headers: OutHeaders, body?: Uint8Array | string): void {
    if (this.sent) return;
    this.sent = true;
    this.done = true;
    // The answer is complete: a request body still arriving is not read any further.
    if (this.bodyPending()) this.discardBody();
    const none = body === undefined || status === 204 || status === 304 || this.method === "HEAD";
    this.resolve(new Response(none ? null : (body as ConstructorParameters<typeof Response>[0]), { status, headers: toHeaders(headers) }));
  }

  start(status: number, headers: OutHeaders): void {
    if (this.sent) return;
    this.sent = true;
    const stream = new ReadableStream<Uint8Array>(
      {
        start: (c) => {
          this.stream = c;
        },
        pull: () => {
          for (const w of this.drainWaiters.splice(0)) w();
        },
        // The reader went away (the client disconnected).
        cancel: () => this.abort(),
      },
      new CountQueuingStrategy({ highWaterMark: QUEUED_CHUNKS }),
    );
    this.resolve(new Response(stream, { status, headers: toHeaders(headers) }));
  }

  write(chunk: Uint8Array | string): boolean {
    const c = this.stream;
    if (!c || this.done || this.abortedFlag) return true;
    c.enqueue(typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk);
    return (c.desiredSize ?? 1) > 0;
  }

  onDrain(fn: () => void): void {
    this.drainWaiters.push(fn);
  }

  end(_trailers?: OutHeaders, last?: Uint8Array): void {
    if (this.done) return;
    this.done = true;
    if (this.bodyPending()) this.discardBody();
    const c = this.stream;
    if (!c) return;
    try {
      if (last) c.enqueue(last);
      c.close();
    } catch {
      // the reader cancelled
    }
  }

  reset(): void {
    if (this.done) return;
    this.done = true;
    if (this.stream) {
      try {
        this.stream.error(new Error("the server reset the response"));
      } catch {
        // already closed
      }
    } else if (!this.sent) {
      this.sent = true;
      this.resolve(new Response(null, { status: 500 }));
    }
  }

  /** Request body bytes may still come: a body not read to its end (nor cancelled). */
  private bodyPending(): boolean {
    const r = this.readable;
    if (r !== undefined) return !r.readableEnded && !r.destroyed;
    return this.request.body !== null && !this.request.bodyUsed;
  }

  /** Cancels the request body: its reader (a pending read included) is released. */
  discardBody(): void {
    if (this.readable) this.readable.destroy();
    else if (this.request.body && !this.request.bodyUsed) void this.request.body.cancel().catch(() => {});
  }
}
