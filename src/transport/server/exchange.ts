// Owns `chainAbortSink`, `exchangeOfSocket`, `Http1Exchange`, `exchangeOfStream`, … The sink after
// adding `fn` to `first`: both are told, `first` first (or `fn`'s alone). Must not change: every
// per-connection and per-exchange bound (docs/security.md).
import type * as http from "node:http";
import type * as http2 from "node:http2";
import type * as net from "node:net";
import type { Readable } from "node:stream";
import { H } from "../../protocol/headers.js";

/** Outgoing header values. */
export type OutHeaders = Record<string, string | number | string[]>;

/** The peer of an exchange. */
export interface Peer {
  readonly address: string;
  readonly port: number;
}

/** Told when the peer abandons an exchange (see {@link Exchange.onAbort}). */
export interface AbortSink {
  onExchangeAbort(): void;
}

function toAbortSink(fn: (() => void) | AbortSink): AbortSink {
  return typeof fn === "function" ? { onExchangeAbort: fn } : fn;
}

/** The sink after adding `fn` to `first`: both are told, `first` first (or `fn`'s alone). */
export function chainAbortSink(first: AbortSink | undefined, fn: (() => void) | AbortSink): AbortSink {
  const sink = toAbortSink(fn);
  if (!first) return sink;
  return {
    onExchangeAbort() {
      first.onExchangeAbort();
      sink.onExchangeAbort();
    },
  };
}

/**
 * Records an abort sink on an exchange; true for the first, whose transport listener the caller
 * installs. A second `onAbort` (an SSE stream taking over from its unary call) adds to the first.
 */
function addAbortSink(ex: { abortSink: AbortSink | undefined }, fn: (() => void) | AbortSink): boolean {
  const first = ex.abortSink;
  ex.abortSink = chainAbortSink(first, fn);
  return first === undefined;
}

/**
 * Receives a request body pushed by {@link Exchange.readBody}. An object rather than three
 * callbacks: the HTTP/2 exchange calls it from listeners shared by every stream, so reading a
 * body allocates no closures.
 */
export interface BodySink {
  onBodyData(chunk: Buffer): void;
  onBodyEnd(): void;
  /** The body failed (the stream was reset); the abort callback reports why. */
  onBodyError(): void;
}

/**
 * What the error writers need to answer a request: its headers, whether a response started, and
 * the ways to send one. Every {@link Exchange} is one; so is the bare socket the listener
 * answers a request it could not parse on.
 */
export interface Responder {
  /** Request headers, lower-case names (empty when the request could not be parsed). */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** True once a response has started. */
  readonly headersSent: boolean;
  /** Sends a complete response; without a body on HTTP/2, one HEADERS frame that ends the stream. */
  respond(status: number, headers: OutHeaders, body?: Uint8Array | string): void;
  /**
   * Ends a streamed response, with trailers when it was started with them. `last` is written
   * with the end in one go (a unary gRPC reply: message, then trailers, in one flush).
   */
  end(trailers?: OutHeaders, last?: Uint8Array): void;
  /** Abandons the exchange: RST_STREAM on HTTP/2, closes the connection on HTTP/1.1. */
  reset(): void;
}

/**
 * One HTTP request/response pair, whatever carried it: an HTTP/1.1 request or an HTTP/2 stream.
 * Everything above the transport is written against this; only streaming (which needs HTTP/2
 * trailers) asks which version it is.
 */
export interface Exchange extends Responder {
  readonly httpVersion: "1.1" | "2";
  readonly method: string;
  /** Path without the query string. */
  readonly path: string;
  /** The query string after `?` (undefined without one), undecoded. */
  readonly query: string | undefined;
  /** Number of request header fields (for the header-count limit). */
  readonly headerCount: number;
  /** The request body. */
  readonly body: Readable;
  /** Address and port of the peer (one shared object per connection on HTTP/2). */
  readonly peer: Peer;
  /** True when the peer went away or reset the stream before the response ended. */
  readonly aborted: boolean;
  /**
   * Calls `fn` once if the peer goes away or resets the stream before the response ended. An
   * {@link AbortSink} object saves the closure on the hot path.
   */
  onAbort(fn: (() => void) | AbortSink): void;
  /**
   * Pushes the request body into `sink`: every chunk, then the end or an error. Use either this
   * or {@link body}, not both. Pause and resume through `body`.
   */
  readBody(sink: BodySink): void;
  /**
   * Forgets the request headers once the call has read what it needs, so they do not stay alive
   * for as long as the response takes. `headers` is empty afterwards.
   */
  releaseHeaders(): void;
  /** Starts a streamed response; with `trailers`, `end()` sends trailers (HTTP/2). */
  start(status: number, headers: OutHeaders, trailers: boolean): void;
  /** Writes part of a streamed response; false means wait for `onDrain`. */
  write(chunk: Uint8Array | string): boolean;
  onDrain(fn: () => void): void;
  /**
   * Drops the rest of the request body of an early response. HTTP/2: RST_STREAM(NO_ERROR) once
   * the response is sent. HTTP/1.1: drains a body declared at most {@link DRAIN_MAX_BYTES} (the
   * connection is kept); of a larger or chunked one, drains at most that much more for at most
   * 5 s, and closes the connection if it is still arriving then, lingering briefly so the client
   * can read the response. With `close` (a body over the limit) the connection closes whatever
   * the size, announced by `Connection: close` when called before responding.
   *
   * A response that completes (`respond`, `end`) while the request body is still arriving does
   * this by itself: nothing reads a request after its answer.
   */
  discardBody(close?: boolean): void;
  /**
   * Says the request body is a stream of messages that may pause for as long as the call lives
   * (client and bidi streaming): the whole-request time limit and the minimum body rate of the
   * server's own port do not apply to it (the body idle limit still does).
   */
  streamingBody?(): void;
}

/**
 * The largest declared HTTP/1.1 request body (`Content-Length`) whose unread rest is drained after
 * an early answer so that the connection can carry the next request; a larger or chunked one
 * closes the connection instead (Go's net/http drains 256 KiB likewise).
 */
const DRAIN_MAX_BYTES = 256 * 1024;
/** How long an HTTP/1.1 connection keeps discarding an unwanted request body before closing. */
const LINGER_MS = 5_000;
/** How much of an unwanted HTTP/1.1 request body is discarded before the connection is cut. */
const LINGER_MAX_BYTES = 64 * 1024 * 1024;

/**
 * The origin-form of an absolute-form request target (`http://host/svc/m?x` → `/svc/m?x`):
 * RFC 9112 §3.2.2 has servers accept it, and use its path. Only for targets not starting with `/`.
 */
function originForm(url: string): string {
  const m = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(url);
  if (!m) return url;
  const rest = url.slice(m[0].length);
  return rest.startsWith("/") ? rest : `/${rest}`;
}

function queryOf(url: string | undefined): string | undefined {
  const q = url ? url.indexOf("?") : -1;
  return q < 0 ? undefined : (url as string).slice(q + 1);
}

function pathOf(url: string | undefined): string {
  if (!url) return "/";
  const q = url.indexOf("?");
  return q < 0 ? url : url.slice(0, q);
}

/** The exchange of an HTTP/1.1 request and response, set once on both. */
const kH1 = Symbol("triple.h1exchange");
type TaggedReq = http.IncomingMessage & { [kH1]: Http1Exchange };
type TaggedRes = http.ServerResponse & { [kH1]: Http1Exchange };

// Listeners shared by every request (`this` is the request or response): no closures per call.
function h1Data(this: TaggedReq, chunk: Buffer): void {
  this[kH1].sink!.onBodyData(chunk);
}
function h1End(this: TaggedReq): void {
  this[kH1].sink!.onBodyEnd();
}
function h1Error(this: TaggedReq): void {
  this[kH1].sink!.onBodyError();
}
function h1Close(this: TaggedRes): void {
  if (!this.writableFinished) this[kH1].abortSink!.onExchangeAbort();
}

const h1Peers = new WeakMap<object, Peer>();

/** The exchange whose response an HTTP/1.1 socket is serving now (node:http's `_httpMessage`), if any. */
export function exchangeOfSocket(socket: object): Http1Exchange | undefined {
  const res = (socket as { _httpMessage?: Partial<TaggedRes> | null })._httpMessage;
  return res ? res[kH1] : undefined;
}

/** An HTTP/1.1 request and its response. */
export class Http1Exchange implements Exchange {
  readonly httpVersion = "1.1" as const;
  readonly method: string;
  readonly path: string;
  headers: http.IncomingHttpHeaders;
  readonly body: Readable;
  /** Where `readBody` pushes the body. */
  sink: BodySink | undefined = undefined;
  /** What `onAbort` registered. */
  abortSink: AbortSink | undefined = undefined;
  /** The connection closes after this response, discarding what still arrives for a while. */
  private lingering = false;
  /** Set by {@link streamingBody}: no minimum body rate. */
  streaming = false;

  constructor(
    readonly req: http.IncomingMessage,
    private readonly res: http.ServerResponse,
  ) {
    this.method = req.method ?? "GET";
    // An absolute-form target (as sent to proxies): keep its path and query only.
    if (req.url !== undefined && req.url.charCodeAt(0) !== 47 /* / */) req.url = originForm(req.url);
    this.path = pathOf(req.url);
    this.headers = req.headers;
    this.body = req;
    (req as TaggedReq)[kH1] = this;
    (res as TaggedRes)[kH1] = this;
  }

  get headerCount(): number {
    return this.req.rawHeaders.length >> 1;
  }
  get query(): string | undefined {
    return queryOf(this.req.url);
  }
  get peer(): Peer {
    // One object per connection: keep-alive requests share it.
    const socket = this.req.socket;
    let p = h1Peers.get(socket);
    if (!p) {
      p = { address: socket.remoteAddress ?? "", port: socket.remotePort ?? 0 };
      h1Peers.set(socket, p);
    }
    return p;
  }
  get headersSent(): boolean {
    return this.res.headersSent;
  }
  get aborted(): boolean {
    return this.res.destroyed && !this.res.writableFinished;
  }

  onAbort(fn: (() => void) | AbortSink): void {
    if (addAbortSink(this, fn)) this.res.on("close", h1Close);
  }

  readBody(sink: BodySink): void {
    this.sink = sink;
    this.req.on("data", h1Data);
    this.req.on("end", h1End);
    this.req.on("error", h1Error);
  }

  releaseHeaders(): void {
    this.headers = EMPTY_HEADERS;
  }

  respond(status: number, headers: OutHeaders, body?: Uint8Array | string): void {
    const res = this.res;
    if (res.headersSent || res.destroyed) return;
    if (!this.lingering && this.bodyPending()) this.discardBody();
    if (body === undefined) {
      // RFC 9110 §8.6: no Content-Length on 204 / 304.
      if (status !== 204 && status !== 304) headers[H.contentLength] = 0;
      res.writeHead(status, headers);
      res.end();
      return;
    }
    headers[H.contentLength] = typeof body === "string" ? Buffer.byteLength(body) : body.byteLength;
    res.writeHead(status, headers);
    res.end(body);
  }

  start(status: number, headers: OutHeaders): void {
    if (this.res.headersSent) return;
    this.res.writeHead(status, headers);
    this.res.flushHeaders();
  }

  write(chunk: Uint8Array | string): boolean {
    return this.res.destroyed ? true : this.res.write(chunk);
  }

  onDrain(fn: () => void): void {
    this.res.once("drain", fn);
  }

  end(_trailers?: OutHeaders, last?: Uint8Array): void {
    if (this.res.destroyed) return;
    if (!this.lingering && this.bodyPending()) this.discardBody();
    this.res.end(last);
  }

  reset(): void {
    this.req.socket.destroy();
  }

  /**
   * True while request body bytes are still to come. Node marks even a bodyless request complete
   * only after its 'request' event, so the framing headers decide until then.
   */
  private bodyPending(): boolean {
    const req = this.req;
    if (req.complete) return false;
    const h = req.headers;
    const length = h["content-length"];
    return h["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
  }

  /** The body is declared small enough ({@link DRAIN_MAX_BYTES}) to read to its end and keep the connection. */
  private drainable(): boolean {
    const h = this.req.headers;
    return h["transfer-encoding"] === undefined && Number(h["content-length"] ?? 0) <= DRAIN_MAX_BYTES;
  }

  streamingBody(): void {
    this.streaming = true;
  }

  /**
   * Gives up on a request whose body arrives too slowly (the listener is about to answer it): the
   * connection closes after the answer, and the call is told as if the peer had gone.
   */
  expire(): void {
    this.discardBody(true);
    const sink = this.abortSink;
    if (sink) {
      this.abortSink = ABORT_REPORTED;
      sink.onExchangeAbort();
    }
  }

  discardBody(close = false): void {
    if (this.lingering || this.req.complete) return;
    if (!close && this.drainable()) {
      this.req.resume();
      return;
    }
    this.lingering = true;
    const req = this.req;
    const socket = req.socket;
    // What still arrives is read and counted (node:http would drop it uncounted); past
    // LINGER_MAX_BYTES the socket goes at once.
    let discarded = 0;
    let closing = false;
    const closeNow = () => {
      if (closing || req.complete) return;
      closing = true;
      linger(socket);
    };
    req.on("data", (chunk: Buffer) => {
      discarded += chunk.length;
      if (discarded > LINGER_MAX_BYTES) socket.destroy();
      else if (discarded > DRAIN_MAX_BYTES) closeNow();
    });
    req.resume();
    if (close && !this.res.headersSent) {
      // A body over the limit, before the response: it goes out with `Connection: close`, and
      // node:http calls destroySoon() once it has finished.
      this.res.shouldKeepAlive = false;
      socket.destroySoon = () => linger(socket);
      return;
    }
    // Otherwise the rest is drained, and the connection kept, if it ends within DRAIN_MAX_BYTES
    // and LINGER_MS (a client that sends its small body after our early answer must not find the
    // connection closed under its writes); past either, the connection closes.
    const timer = setTimeout(closeNow, LINGER_MS);
    timer.unref();
    socket.once("close", () => clearTimeout(timer));
    req.once("end", () => clearTimeout(timer));
  }
}

/**
 * Closes a connection that still receives an unwanted request body. Closing a socket with unread
 * bytes makes the kernel send RST, and the client then sees EPIPE/ECONNRESET instead of our
 * answer: linger instead (as nginx does), i.e. half-close, go on discarding what arrives, and
 * destroy after {@link LINGER_MS} (or when the peer closes first, or past LINGER_MAX_BYTES).
 */
function linger(socket: net.Socket): void {
  if (socket.destroyed) return;
  socket.end();
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once("close", () => clearTimeout(timer));
}

const EMPTY_HEADERS: Readonly<Record<string, undefined>> = Object.freeze(Object.create(null));

const NO_PEER: Peer = { address: "", port: 0 };
const peers = new WeakMap<http2.Http2Session, Peer>();

/** The peer of a session, read once: `session.socket` is a proxy, slow to go through per call. */
function peerOf(session: http2.Http2Session | undefined): Peer {
  if (!session) return NO_PEER;
  let p = peers.get(session);
  if (!p) {
    const socket = session.socket;
    if (!socket) return NO_PEER;
    p = { address: socket.remoteAddress ?? "", port: socket.remotePort ?? 0 };
    peers.set(session, p);
  }
  return p;
}

function endAfterWrite(this: http2.ServerHttp2Stream, err?: Error | null): void {
  if (!err && !this.destroyed) this.end();
}

/** The exchange of a stream. Set once per stream, so every stream takes the same shape. */
const kExchange = Symbol("triple.exchange");
type TaggedStream = http2.ServerHttp2Stream & { [kExchange]: Http2Exchange };

// Listeners shared by every stream (`this` is the stream): per-call closures would be allocated
// for each call and kept alive as long as its stream.
function h2Data(this: TaggedStream, chunk: Buffer): void {
  const ex = this[kExchange];
  ex.received += chunk.length;
  ex.sink!.onBodyData(chunk);
}
function h2End(this: TaggedStream): void {
  this[kExchange].sink!.onBodyEnd();
}
function h2Error(this: TaggedStream): void {
  this[kExchange].sink?.onBodyError();
}
function h2Close(this: TaggedStream): void {
  if (this.rstCode !== 0 || !this.writableFinished) this[kExchange].abortSink!.onExchangeAbort();
}
/** The abort sink of an exchange whose abort was already reported. */
const ABORT_REPORTED: AbortSink = Object.freeze({ onExchangeAbort() {} });

/** The exchange the listener made of an HTTP/2 stream, if it made one. */
export function exchangeOfStream(stream: http2.Http2Stream): Http2Exchange | undefined {
  return (stream as Partial<TaggedStream>)[kExchange];
}
function h2WantTrailers(this: TaggedStream): void {
  if (this.destroyed) return;
  const ex = this[kExchange];
  this.sendTrailers(ex.pendingTrailers ?? NO_TRAILERS);
  // node submits the trailers from an immediate; a reset submitted before them would drop them.
  if (ex.resetAfterTrailers) setImmediate(closeNoError, this);
}
/** RST_STREAM(NO_ERROR): the answer is complete, the rest of the request is not wanted (RFC 9113 §8.1). */
function closeNoError(stream: http2.ServerHttp2Stream): void {
  if (!stream.destroyed) stream.close(0);
}
const NO_TRAILERS: OutHeaders = Object.freeze({}) as OutHeaders;
const WAIT_FOR_TRAILERS: http2.ServerStreamResponseOptions = Object.freeze({ waitForTrailers: true });
const END_STREAM: http2.ServerStreamResponseOptions = Object.freeze({ endStream: true });

/** An HTTP/2 stream. */
export class Http2Exchange implements Exchange {
  readonly httpVersion = "2" as const;
  readonly method: string;
  readonly path: string;
  readonly query: string | undefined;
  readonly body: Readable;
  /** Trailers `end()` sends (read by the shared 'wantTrailers' listener). */
  pendingTrailers: OutHeaders | undefined = undefined;
  /** Where `readBody` pushes the body. */
  sink: BodySink | undefined = undefined;
  /** What `onAbort` registered. */
  abortSink: AbortSink | undefined = undefined;
  /** The request's content type, kept by `releaseHeaders` (a late answer must still pick its protocol). */
  contentType: string | undefined = undefined;
  /** The response was started with trailers (`start(…, true)`). */
  private trailered = false;
  /** `discardBody` ran: the stream is reset once the answer is out. */
  private discarding = false;
  /** The trailers end an answer given while the request body was still arriving: reset once they are out. */
  resetAfterTrailers = false;
  /** Request body bytes pushed through `readBody` so far (the body sweep measures its rate). */
  received = 0;
  /** Set by {@link streamingBody}: no whole-request time limit, no minimum body rate. */
  streaming = false;

  constructor(
    private readonly stream: http2.ServerHttp2Stream,
    public headers: http2.IncomingHttpHeaders,
    private readonly rawHeaderCount: number,
  ) {
    this.method = headers[":method"] ?? "GET";
    const p = headers[":path"];
    this.path = pathOf(p);
    this.query = queryOf(p);
    this.body = stream;
    (stream as TaggedStream)[kExchange] = this;
    // Every stream gets an 'error' listener, read or not: a reset with an error code makes node
    // emit 'error', and one with no listener would take the process down.
    stream.on("error", h2Error);
  }

  get headerCount(): number {
    return this.rawHeaderCount;
  }
  get peer(): Peer {
    return peerOf(this.stream.session);
  }
  get headersSent(): boolean {
    return this.stream.headersSent;
  }
  get aborted(): boolean {
    return this.stream.aborted || (this.stream.destroyed && !this.stream.writableFinished);
  }

  onAbort(fn: (() => void) | AbortSink): void {
    // `on`, not `once`: the stream is this call's alone, and once() allocates a wrapper.
    if (addAbortSink(this, fn)) this.stream.on("close", h2Close);
  }

  readBody(sink: BodySink): void {
    this.sink = sink;
    const s = this.stream;
    s.on("data", h2Data);
    s.on("end", h2End);
  }

  releaseHeaders(): void {
    this.contentType = this.headers[H.contentType];
    this.headers = EMPTY_HEADERS;
  }

  respond(status: number, headers: OutHeaders, body?: Uint8Array | string): void {
    const s = this.stream;
    if (s.headersSent || s.destroyed) return;
    headers[":status"] = status;
    if (body === undefined || (typeof body === "string" ? body.length === 0 : body.byteLength === 0)) {
      s.respond(headers, END_STREAM);
    } else {
      s.respond(headers);
      // Write, then end once the write completed. `end(body)` lets nghttp2 close the stream
      // before the write's after-tick runs, and node then builds (and throws away) an
      // ERR_STREAM_DESTROYED with a stack trace for every response (nodejs/node#36860): about a
      // sixth of the CPU of a small unary call. The empty END_STREAM DATA frame costs far less.
      s.write(body, endAfterWrite.bind(s));
    }
    if (!s.readableEnded) this.discardBody();
  }

  start(status: number, headers: OutHeaders, trailers: boolean): void {
    const s = this.stream;
    if (s.headersSent || s.destroyed) return;
    headers[":status"] = status;
    if (trailers) {
      this.trailered = true;
      s.respond(headers, WAIT_FOR_TRAILERS);
      s.on("wantTrailers", h2WantTrailers);
    } else {
      s.respond(headers);
    }
  }

  write(chunk: Uint8Array | string): boolean {
    return this.stream.destroyed ? true : this.stream.write(chunk);
  }

  onDrain(fn: () => void): void {
    this.stream.once("drain", fn);
  }

  end(trailers?: OutHeaders, last?: Uint8Array): void {
    const s = this.stream;
    if (s.destroyed) return;
    this.pendingTrailers = trailers;
    if (last) s.end(last);
    else s.end();
    // The answer is complete: a request body still arriving is not read any further.
    if (s.readableEnded || s.endAfterHeaders) return;
    if (this.trailered) this.resetAfterTrailers = true;
    else this.discardBody();
  }

  reset(): void {
    if (!this.stream.destroyed) this.stream.close(0x8 /* CANCEL */);
  }

  streamingBody(): void {
    this.streaming = true;
  }

  /**
   * Gives up on a request whose body stopped arriving (the listener answered it already, or could
   * not): RST_STREAM(NO_ERROR) once the answer is out, CANCEL if there is none, and the call is
   * told as if the peer had gone, so its handler's signal fires and nothing waits for the body.
   */
  expire(): void {
    const s = this.stream;
    if (!s.destroyed) {
      if (!s.headersSent) s.close(0x8 /* CANCEL */);
      else if (s.writableFinished) s.close(0);
      else s.once("finish", () => s.close(0));
    }
    const sink = this.abortSink;
    if (sink) {
      this.abortSink = ABORT_REPORTED;
      sink.onExchangeAbort();
    }
  }

  discardBody(): void {
    const s = this.stream;
    // No body at all (END_STREAM on the request's HEADERS, as for a GET): nothing to stop.
    if (this.discarding || s.destroyed || s.endAfterHeaders) return;
    this.discarding = true;
    // RFC 9113 §8.1: after a complete response, RST_STREAM(NO_ERROR) asks the client to stop sending.
    if (s.writableFinished) s.close(0);
    else s.once("finish", () => s.close(0));
  }
}
