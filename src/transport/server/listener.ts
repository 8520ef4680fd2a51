// Owns `checkDuration`, `OnePortListener`. Refuses a timeout that is not a number >= 0: NaN or a
// negative value would otherwise switch the timeout off without a word (every comparison with NaN
// is false). Must not change: every per-connection and per-exchange bound (docs/security.md).
import * as http from "node:http";
import * as http2 from "node:http2";
import * as net from "node:net";
import * as tls from "node:tls";
import { installStreamTable } from "../stream-table.js";
import { countStream, IdleEvictor, idleSince, newActivity, type SocketActivity, watchSession } from "./connection-activity.js";
import { ConnectionGuard, DEFAULT_MAX_CONNECTIONS_PER_PEER, defaultMaxConnections, type RefusalReport } from "./connection-guard.js";
import { type Exchange, Http1Exchange, Http2Exchange, type Responder } from "./exchange.js";
import { type BodyExpiry, BodyWatch, isDeadSession } from "./session-watch.js";
import { SocketResponder } from "./socket-responder.js";
import type { Clock } from "../clock.js";

const H_CONTENT_TYPE = "content-type";
const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
/** Longest interval of the connection sweep, ms. */
const SWEEP_MS = 500;
/** How long a connection whose HTTP/2 session died (GOAWAY sent) has to flush before it is destroyed, ms. */
const DEAD_SESSION_GRACE_MS = 1_000;

/** Transport tuning; every value has a safe default (see docs/security.md). */
export interface TransportOptions {
  /** TLS key/cert (and any other `tls.createServer` option): the port then speaks h2 and http/1.1 by ALPN. */
  tls?: tls.TlsOptions;
  /** HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS. Default 1000. */
  maxConcurrentStreams?: number;
  /**
   * Closes connections that carried no request this long, ms: no byte either way, or (HTTP/2)
   * no stream open, whatever PINGs or SETTINGS the peer sends. Default 120 000.
   */
  idleTimeoutMs?: number;
  /**
   * HTTP/1.1: time allowed to receive the request headers, ms (slowloris). Also the time a new
   * connection (cleartext or TLS, after a TLS handshake that must finish within it too) may stay
   * silent. Default 10 000.
   */
  headersTimeoutMs?: number;
  /**
   * Time allowed to receive a whole request, ms. HTTP/1.1: node:http's own limit (the connection
   * is closed). HTTP/2: a stream whose request has not ended this long after it opened, and that
   * the server has not started answering, is answered 408 / `deadline_exceeded` and reset
   * (client and bidi streams excepted). 0 disables. Default 300 000.
   */
  requestTimeoutMs?: number;
  /**
   * HTTP/2: a stream whose request has not ended, that the server has not started answering, and
   * that received no DATA for this long, ms, is answered 408 / `deadline_exceeded` and reset. An
   * inactivity limit: a slow upload that keeps sending lives. 0 disables. Default 60 000.
   */
  bodyIdleTimeoutMs?: number;
  /**
   * The slowest a request body may arrive, bytes per second, measured over the last
   * `bodyRateWindowMs` (a sliding window) while the server reads it and has not started answering (both HTTP
   * versions; client and bidi streams excepted): a slower one is answered 408 /
   * `deadline_exceeded` and its stream reset (HTTP/2) or its connection closed (HTTP/1.1). 0
   * disables. Default 240 (Kestrel's `MinRequestBodyDataRate`).
   */
  minBodyBytesPerSecond?: number;
  /** The window of `minBodyBytesPerSecond`, ms; nothing is judged before a first full window (the grace). Default 5 000. */
  bodyRateWindowMs?: number;
  /**
   * Most open connections. A new one past it closes the connection idle the longest, or is
   * closed at accept when none is idle. Default 10 000 (or 80 % of the open-file limit, if lower).
   */
  maxConnections?: number;
  /** Most open connections from one remote address; past it, as `maxConnections` among that address's. Default 1 000. */
  maxConnectionsPerPeer?: number;
  /** HTTP/2 per-session memory bound, MiB (nghttp2 refuses new streams past it). Default 64. */
  http2SessionMemoryMb?: number;
}

/** `minBodyBytesPerSecond` and `bodyRateWindowMs` (checked by createServer), defaulted. */
function bodyRate(options: TransportOptions): { minRate: number; windowMs: number } {
  return { minRate: options.minBodyBytesPerSecond ?? DEFAULT_MIN_BODY_RATE, windowMs: options.bodyRateWindowMs ?? DEFAULT_BODY_RATE_WINDOW_MS };
}

/** The default minimum request body rate, bytes/s, and its window, ms (Kestrel's 240 B/s with a 5 s grace). */
const DEFAULT_MIN_BODY_RATE = 240;
const DEFAULT_BODY_RATE_WINDOW_MS = 5_000;

/** The HPACK size of a header list: name and value octets plus 32 per field (RFC 7541 §4.1). */
function headerListSize(raw: readonly string[]): number {
  let n = 0;
  for (let i = 0; i < raw.length; i++) n += raw[i].length;
  return n + 16 * raw.length;
}

/** Why the listener answered a request itself, before it became an exchange. */
export type Refusal =
  | { readonly kind: "headers-too-large"; readonly limit: number }
  | { readonly kind: "request-timeout"; readonly detail?: string }
  | { readonly kind: "bad-request"; readonly detail: string };

/** What the listener hands up: exchanges, and requests it refused for the protocol to answer. */
export interface ListenerHandlers {
  onExchange(ex: Exchange): void;
  /**
   * Answer a refused request on `responder` (an HTTP/2 stream's exchange, or a bare HTTP/1.1
   * socket whose request could not be parsed). The listener knows sockets only: the protocols
   * know what an error looks like.
   */
  onRefusal(responder: Responder, refusal: Refusal): void;
  /** Connections were refused at accept (a cap reached); called at most once a minute. */
  onConnectionsRefused?(report: RefusalReport): void;
}

/**
 * The one-port transport: a TCP (or TLS) listener whose connections go to an HTTP/1.1 or an
 * HTTP/2 server. Cleartext connections are told apart by their first bytes (the HTTP/2
 * preface, RFC 9113 §3.4); TLS connections by ALPN. Both servers hand each request or stream up
 * as an {@link Exchange}; requests refused before that (oversized headers, timeouts, garbage)
 * go up as a {@link Refusal} for the protocol to answer. Nothing here knows about RPC.
 */
export class OnePortListener {
  readonly http1: http.Server;
  readonly http2: http2.Http2Server;
  readonly server: net.Server;
  /** Open connections and what the idle sweep knows of them. */
  private readonly sockets = new Map<net.Socket, SocketActivity>();
  private readonly sessions = new Set<http2.ServerHttp2Session>();
  /** The socket being handed to the HTTP/2 server (its 'session' event fires synchronously). */
  private handoff: net.Socket | undefined;
  private sweeper: NodeJS.Timeout | undefined;
  private readonly maxHeaderBytes: number;
  private readonly guard: ConnectionGuard;
  private readonly evictor = new IdleEvictor(this.sockets, (socket, a) => this.closeIdle(socket, a, Date.now()));
  private readonly bodies: BodyWatch | undefined;

  constructor(
    private readonly handlers: ListenerHandlers,
    readonly options: TransportOptions & { readonly maxHeaderBytes?: number; readonly clock?: Clock } = {},
  ) {
    this.maxHeaderBytes = options.maxHeaderBytes ?? 16 * 1024;
    this.guard = new ConnectionGuard(
      options.maxConnections ?? defaultMaxConnections(),
      options.maxConnectionsPerPeer ?? DEFAULT_MAX_CONNECTIONS_PER_PEER,
      handlers.onConnectionsRefused?.bind(handlers),
      options.clock,
    );
    const { minRate, windowMs } = bodyRate(options);
    const rules = { idleMs: options.bodyIdleTimeoutMs ?? 60_000, totalMs: options.requestTimeoutMs ?? 300_000, minRate: windowMs > 0 ? minRate : 0, windowMs };
    const watched = rules.idleMs > 0 || rules.totalMs > 0 || rules.minRate > 0;
    this.bodies = watched ? new BodyWatch(rules, (ex, why) => this.expireBody(ex, why)) : undefined;
    this.http1 = this.createHttp1();
    this.http2 = this.createHttp2();
    // No http2/http `setTimeout`: node refreshes those timers on every stream event, which
    // costs ~7 % of a small unary call. The idle sweep below watches byte counters instead.
    this.server = options.tls ? this.createTls(options.tls) : this.createCleartext();
    // Past a cap, a new connection takes the place of an idle one (the guard asks the evictor).
    this.guard.evict = (peer) => this.evictor.evict(peer, Date.now());
  }

  /**
   * Connections open now; refused at accept since the start (over `maxConnections` /
   * `maxConnectionsPerPeer` with none idle); idle ones closed to admit new ones since the start.
   */
  get connections(): { open: number; refused: number; evicted: number } {
    return { open: this.guard.open, refused: this.guard.refused, evicted: this.guard.evicted };
  }

  /**
   * A request whose body stopped arriving, took too long or arrives too slowly: answered 408 /
   * deadline_exceeded if it can be, then the HTTP/2 stream is reset or the HTTP/1.1 connection
   * closed after the answer.
   */
  private expireBody(ex: Http2Exchange | Http1Exchange, why: BodyExpiry): void {
    // HTTP/1.1: Connection: close goes out with the answer.
    if (ex instanceof Http1Exchange) ex.expire();
    if (!ex.headersSent) {
      // The call may have released the request headers; the answer's protocol needs the content type back.
      const ct = ex instanceof Http2Exchange ? ex.contentType : undefined;
      if (ct !== undefined && ex.headers[H_CONTENT_TYPE] === undefined) (ex as Http2Exchange).headers = { [H_CONTENT_TYPE]: ct };
      try {
        this.handlers.onRefusal(ex, { kind: "request-timeout", detail: this.expiryDetail(why) });
      } catch {
        // answered or not, the stream goes
      }
    }
    if (ex instanceof Http2Exchange) ex.expire();
  }

  private expiryDetail(why: BodyExpiry): string | undefined {
    const o = this.options;
    if (why === "total") return `the request did not arrive within ${o.requestTimeoutMs ?? 300_000} ms (requestTimeoutMs)`;
    if (why === "idle") return undefined;
    const { minRate, windowMs } = bodyRate(o);
    return `the request body arrived slower than ${minRate} bytes/s over ${windowMs} ms (minBodyBytesPerSecond)`;
  }

  private createHttp1(): http.Server {
    const headersTimeout = this.options.headersTimeoutMs ?? 10_000;
    const requestTimeout = this.options.requestTimeoutMs ?? 300_000;
    const server = http.createServer(
      {
        maxHeaderSize: this.maxHeaderBytes,
        headersTimeout,
        requestTimeout,
        // node:http enforces both timeouts only when it sweeps its connections (every 30 s by
        // default), which would let a slowloris client hold a socket 3× past headersTimeout.
        connectionsCheckingInterval: Math.min(5_000, Math.max(100, Math.floor(Math.min(headersTimeout, requestTimeout) / 4))),
        keepAliveTimeout: 5_000,
        noDelay: true,
      },
      (req, res) => this.handlers.onExchange(new Http1Exchange(req, res)),
    );
    server.on("clientError", (err: NodeJS.ErrnoException, socket: net.Socket) => this.onClientError(err, socket));
    return server;
  }

  /** A request node:http could not parse: answered on the socket, which then closes. */
  private onClientError(err: NodeJS.ErrnoException, socket: net.Socket): void {
    // Node answers header overflows itself only when no listener exists; keep its statuses.
    if (!socket.writable || (socket as net.Socket & { _httpMessage?: unknown })._httpMessage) {
      socket.destroy();
      return;
    }
    const refusal: Refusal =
      err.code === "HPE_HEADER_OVERFLOW"
        ? { kind: "headers-too-large", limit: this.maxHeaderBytes }
        : err.code === "ERR_HTTP_REQUEST_TIMEOUT"
          ? { kind: "request-timeout" }
          : { kind: "bad-request", detail: err.code ?? err.message };
    this.handlers.onRefusal(new SocketResponder(socket), refusal);
  }

  private createHttp2(): http2.Http2Server {
    const server = http2.createServer({
      settings: {
        maxConcurrentStreams: this.options.maxConcurrentStreams ?? 1000,
        maxHeaderListSize: this.maxHeaderBytes,
        enablePush: false,
        initialWindowSize: 1024 * 1024,
        // RFC 8441: extended CONNECT, for WebSockets over HTTP/2 (the protocols answer the streams).
        enableConnectProtocol: true,
      },
      maxHeaderListPairs: 256,
      maxSessionMemory: this.options.http2SessionMemoryMb ?? 64,
    });
    server.on("stream", (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, _flags: number, rawHeaders: string[]) => {
      // nghttp2 applies SETTINGS_MAX_HEADER_LIST_SIZE only once the client acknowledged our
      // SETTINGS, so a request sent right after the preface could carry up to 16 MiB of headers:
      // measure every stream ourselves (RFC 7541 §4.1 sizes) and refuse it.
      countStream(stream);
      const ex = new Http2Exchange(stream, headers, rawHeaders.length >> 1);
      if (headerListSize(rawHeaders) > this.maxHeaderBytes) this.refuseHeaderSize(ex, stream);
      else this.handlers.onExchange(ex);
    });
    server.on("session", (session) => this.onSession(session));
    return server;
  }

  private refuseHeaderSize(ex: Http2Exchange, stream: http2.ServerHttp2Stream): void {
    try {
      this.handlers.onRefusal(ex, { kind: "headers-too-large", limit: this.maxHeaderBytes });
      ex.discardBody();
    } catch {
      stream.destroy();
    }
  }

  private onSession(session: http2.ServerHttp2Session): void {
    installStreamTable(session);
    this.sessions.add(session);
    const activity = this.handoff && this.sockets.get(this.handoff);
    if (activity) watchSession(session, activity);
    session.once("close", () => this.sessions.delete(session));
    // Larger connection window: the default 64 KiB throttles large messages on fast links.
    session.once("connect", () => {
      try {
        session.setLocalWindowSize(8 * 1024 * 1024);
      } catch {
        // session already gone
      }
    });
    session.on("error", () => {});
  }

  private track(socket: net.Socket): void {
    this.sockets.set(socket, newActivity(Date.now()));
    socket.once("close", () => this.sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  }

  private createTls(options: tls.TlsOptions): net.Server {
    const silentMs = this.options.headersTimeoutMs ?? 10_000;
    // A handshake that never completes is cut by node (tlsClientError, socket destroyed).
    const server = tls.createServer({ ALPNProtocols: ["h2", "http/1.1"], handshakeTimeout: silentMs, ...options });
    server.on("secureConnection", (socket) => {
      this.track(socket);
      this.closeIfSilent(socket, silentMs);
      if (socket.alpnProtocol === "h2") this.toHttp2(socket);
      else this.http1.emit("connection", socket);
    });
    server.on("connection", (socket: net.Socket) => {
      if (this.guard.admit(socket)) socket.setNoDelay(true);
    });
    // A listener here replaces node's own, which destroyed the socket: do it (a failed or timed-out
    // handshake would otherwise keep its fd until the peer closes).
    server.on("tlsClientError", (_err: Error, socket: tls.TLSSocket) => socket.destroy());
    return server;
  }

  /**
   * A TLS connection that sends no byte of a request (no HTTP/1.1 request line, no HTTP/2
   * preface) within `ms` of its handshake is closed, as a silent cleartext one is. One timer
   * per connection; the request's own timeouts take over once bytes arrive.
   */
  private closeIfSilent(socket: tls.TLSSocket, ms: number): void {
    // 0 is off, as on cleartext (socket.setTimeout(0)) and for node's headersTimeout.
    if (ms <= 0) return;
    const timer = setTimeout(() => {
      if (socket.bytesRead === 0) socket.destroy();
    }, ms);
    timer.unref();
    socket.once("close", () => clearTimeout(timer));
  }

  private createCleartext(): net.Server {
    return net.createServer({ noDelay: true }, (socket) => {
      if (!this.guard.admit(socket)) return;
      this.track(socket);
      this.sniff(socket);
    });
  }

  /** Reads just enough of a cleartext connection to tell HTTP/2 prior knowledge from HTTP/1.1. */
  private sniff(socket: net.Socket): void {
    let seen: Buffer | undefined;
    const onData = (chunk: Buffer) => {
      seen = seen ? Buffer.concat([seen, chunk]) : chunk;
      const n = Math.min(seen.length, PREFACE.length);
      const isPrefix = seen.subarray(0, n).equals(PREFACE.subarray(0, n));
      if (isPrefix && seen.length < PREFACE.length) return; // need more bytes to decide
      socket.removeListener("data", onData);
      socket.removeListener("end", onEnd);
      socket.removeListener("timeout", onIdle);
      socket.setTimeout(0);
      socket.pause();
      socket.unshift(seen);
      // The HTTP/2 session reads the unshifted bytes itself (socket.read() on its next tick);
      // resuming here would flow them to no listener. HTTP/1.1 resumes the socket on its own.
      if (isPrefix) this.toHttp2(socket);
      else {
        this.http1.emit("connection", socket);
        socket.resume();
      }
    };
    const onEnd = () => socket.destroy();
    const onIdle = () => socket.destroy();
    socket.on("data", onData);
    socket.once("end", onEnd);
    // A connection that never says anything is closed like any idle one.
    socket.setTimeout(this.options.headersTimeoutMs ?? 10_000);
    socket.once("timeout", onIdle);
  }

  /**
   * Serves a connection that is no socket of this listener's (an in-memory one, see
   * `transport/memory.ts`) as HTTP/1.1 or HTTP/2. The caller knows which: there is nothing to sniff.
   */
  accept(connection: import("node:stream").Duplex, httpVersion: "1.1" | "2"): void {
    const socket = connection as net.Socket;
    if (httpVersion === "2") this.toHttp2(socket);
    else {
      this.http1.emit("connection", socket);
      socket.resume();
    }
  }

  private toHttp2(socket: net.Socket): void {
    this.handoff = socket;
    try {
      this.http2.emit("connection", socket);
    } finally {
      this.handoff = undefined;
    }
  }

  /**
   * Once per sweep interval, over every connection: closes HTTP/2 connections whose session
   * nghttp2 gave up on (a fatal protocol error, GOAWAY already sent; checked only for sockets
   * that moved bytes since the last sweep, as dying takes a read), connections that carried no
   * request for `idleTimeoutMs` (no byte either way, or on HTTP/2 no stream whatever PINGs the
   * peer sends; see `idleSince`; HTTP/2 sessions get a GOAWAY first and the socket a second
   * later), and HTTP/2 streams whose request body stalled. Reading node's byte counters and
   * stream tables once per sweep costs nothing per call, unlike socket timeouts that are re-armed
   * on every read and write.
   */
  private sweep(idleMs: number): void {
    const now = Date.now();
    for (const [socket, a] of this.sockets) {
      const bytes = socket.bytesRead + socket.bytesWritten;
      if (a.session === undefined) this.bodies?.sweepHttp1(socket, now);
      if (bytes !== a.bytes) {
        a.bytes = bytes;
        a.since = now;
        if (a.session !== undefined && !a.dead && isDeadSession(a.session)) {
          this.closeDead(socket, a);
          continue;
        }
      }
      if (idleMs > 0 && now - idleSince(a, now) >= idleMs) this.closeIdle(socket, a, now);
    }
    if (this.bodies) for (const s of this.sessions) this.bodies.sweep(s, now);
  }

  /**
   * A connection nghttp2 ended with GOAWAY (RFC 9113 §5.4.1: "the endpoint MUST close the TCP
   * connection"): half-close now, so the GOAWAY goes out before our FIN, and destroy within a
   * second (nghttp2 reads no more, so the peer's close would never be noticed).
   */
  private closeDead(socket: net.Socket, a: SocketActivity): void {
    a.dead = true;
    socket.end();
    // Read again (nghttp2 ignores what arrives): a peer that already closed is then seen at once
    // and the socket goes now rather than after the grace.
    try {
      (socket as net.Socket & { _handle?: { readStart?: () => number } })._handle?.readStart?.();
    } catch {
      // the grace timer below still closes it
    }
    setTimeout(() => socket.destroy(), DEAD_SESSION_GRACE_MS).unref();
  }

  private closeIdle(socket: net.Socket, a: SocketActivity, now: number): void {
    a.closing = true;
    if (a.session && !a.session.closed && !a.session.destroyed) {
      a.session.close();
      setTimeout(() => socket.destroy(), 1000).unref();
      // do not close twice
      a.since = now;
      a.requestSince = now;
    } else {
      socket.destroy();
    }
  }

  listen(port: number, host: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(port, host, () => {
        this.server.removeListener("error", reject);
        // node:http starts tracking connections (headersTimeout / requestTimeout sweeps,
        // closeIdleConnections) on its own 'listening' event; ours never listens itself.
        this.http1.emit("listening");
        const idleMs = this.options.idleTimeoutMs ?? 120_000;
        const bodyMs = this.options.bodyIdleTimeoutMs ?? 60_000;
        const rateMs = this.options.bodyRateWindowMs ?? 0;
        // At least twice a second: dead HTTP/2 sessions are closed within one interval.
        const every = Math.min(SWEEP_MS, ...[idleMs, bodyMs, rateMs].filter((ms) => ms > 0).map((ms) => Math.floor(ms / 4)));
        this.sweeper = setInterval(() => this.sweep(idleMs), Math.max(50, every));
        this.sweeper.unref();
        resolve();
      });
    });
  }

  /** Stops accepting; sends GOAWAY to HTTP/2 sessions and closes idle HTTP/1.1 connections. */
  stopAccepting(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const s of this.sessions) {
      if (!s.closed && !s.destroyed) s.close();
    }
    this.http1.closeIdleConnections();
    // Keep-alive connections that are busy now close after their current response.
    this.http1.prependListener("request", (_req, res) => {
      if (!res.headersSent) res.shouldKeepAlive = false;
    });
    return closed;
  }

  /** Destroys every remaining connection. */
  destroyAll(): void {
    // Stops node:http's connection sweep timer (the server itself never listened).
    this.http1.close(() => {});
    if (this.sweeper) clearInterval(this.sweeper);
    for (const s of this.sessions) s.destroy();
    for (const sock of this.sockets.keys()) sock.destroy();
  }

  /** The bound address, or null before listening. */
  address(): net.AddressInfo | null {
    return this.server.address() as net.AddressInfo | null;
  }
}
