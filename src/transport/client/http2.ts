// Owns `Http2Transport`. HTTP/2 for Triple unary and gRPC: one session per provider reused by all
// calls, replaced after GOAWAY or a dropped connection, kept honest by keepalive pings. Must not
// change: every bound on what a peer can make us hold (docs/security.md).
import type { OutgoingHttpHeaders } from "node:http";
import * as http2 from "node:http2";
import { NEVER_ABORTS } from "./call-scope.js";
import type { Provider } from "./provider.js";
import { responseTooLarge } from "../../protocol/errors.js";
import { RpcError } from "../../protocol/rpc-error.js";
import { memoryConnection } from "../memory.js";
import { installStreamTable } from "../stream-table.js";
import { connectFailure, isConnectErrorCode, kSession, type SessionState, streamClosedError, streamError, transportError } from "./errors.js";
import type { HttpReply, TransportSettings, UnaryRequest, UnaryTransport } from "./unary-transport.js";

/** HTTP/2 settings of the transport besides the shared ones. */
export interface Http2Settings extends TransportSettings {
  /** Ping interval, ms; 0 disables keepalive pings. */
  readonly keepaliveMs: number;
  /** A ping unanswered this long drops the session, ms. */
  readonly keepaliveTimeoutMs: number;
}

/** One HTTP/2 connection to a provider, shared by every call to it. */
class PooledSession implements SessionState {
  readonly session: http2.ClientHttp2Session;
  readonly ready: Promise<void>;
  /** The server's first SETTINGS arrived (what it allows, e.g. extended CONNECT, is known). */
  readonly settingsKnown: Promise<void>;
  /** No new streams: GOAWAY received, closed, or broken. */
  dead = false;
  /** The last stream id of the GOAWAY received: streams above it were not processed. */
  goawayLastStreamId: number | undefined = undefined;
  /** The connection is established: calls skip waiting on `ready`. */
  connected = false;
  private active = 0;
  private pingTimer: NodeJS.Timeout | undefined;

  constructor(provider: Provider, settings: Http2Settings, onDead: (s: PooledSession) => void) {
    this.session = http2.connect(provider.origin, {
      ...settings.tls,
      settings: { enablePush: false },
      ...(provider.memory ? { createConnection: () => memoryConnection(provider.host, "2") } : undefined),
    });
    const s = this.session;
    installStreamTable(s);
    this.ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        const e = Object.assign(new Error(`connect timed out after ${settings.connectTimeoutMs} ms`), { code: "ETIMEDOUT" });
        reject(connectFailure(provider.address, e));
        s.destroy();
      }, settings.connectTimeoutMs);
      s.once("connect", () => {
        this.connected = true;
        provider.leaving = false;
        clearTimeout(timer);
        resolve();
      });
      s.on("error", (e) => {
        clearTimeout(timer);
        // Before 'connect' this is the provider refusing us; after, streams report their own errors.
        if (!this.connected) reject(isConnectErrorCode(e) ? connectFailure(provider.address, e) : transportError(provider.address, e, false));
      });
      s.once("close", () => {
        clearTimeout(timer);
        if (!this.connected) reject(transportError(provider.address, new Error("the connection closed before it was established"), false));
      });
    });
    this.ready.catch(() => {}); // callers await it; an unobserved failure must not crash the process
    this.settingsKnown = new Promise<void>((resolve, reject) => {
      s.once("remoteSettings", () => resolve());
      this.ready.catch(reject);
      s.once("close", () => reject(transportError(provider.address, new Error("the connection closed before the server's SETTINGS"), false)));
    });
    this.settingsKnown.catch(() => {});
    const die = () => {
      if (this.dead) return;
      this.dead = true;
      if (this.pingTimer) clearInterval(this.pingTimer);
      onDead(this);
    };
    // After GOAWAY the streams in flight finish; new calls open a new session.
    s.on("goaway", (code: number, lastStreamId: number) => {
      this.goawayLastStreamId = Math.min(lastStreamId, this.goawayLastStreamId ?? lastStreamId);
      // NO_ERROR: the server is shutting down gracefully, so refused connections that follow are expected.
      if (code === http2.constants.NGHTTP2_NO_ERROR) provider.leaving = true;
      die();
    });
    s.on("close", die);
    s.on("error", die);
    if (settings.keepaliveMs > 0) {
      this.pingTimer = setInterval(() => this.ping(settings.keepaliveTimeoutMs), settings.keepaliveMs);
      this.pingTimer.unref();
    }
  }

  private ping(timeoutMs: number): void {
    if (this.dead || this.session.destroyed || this.session.connecting) return;
    const timer = setTimeout(() => this.session.destroy(), timeoutMs);
    timer.unref();
    try {
      this.session.ping((err) => {
        clearTimeout(timer);
        if (err) this.session.destroy();
      });
    } catch {
      clearTimeout(timer);
    }
  }

  /** Counts a stream in; the socket keeps the process alive only while streams are open. */
  hold(): void {
    if (this.active++ === 0) this.session.ref();
  }

  release(): void {
    if (--this.active === 0 && !this.session.destroyed) this.session.unref();
  }
}

/**
 * HTTP/2 for Triple unary and gRPC: one session per provider reused by all calls, replaced after
 * GOAWAY or a dropped connection, kept honest by keepalive pings.
 */
export class Http2Transport implements UnaryTransport {
  private readonly sessions = new Map<string, PooledSession>();

  constructor(private readonly settings: Http2Settings) {}

  private sessionFor(provider: Provider): PooledSession {
    let s = this.sessions.get(provider.address);
    if (s && !s.dead && !s.session.closed && !s.session.destroyed) return s;
    s = new PooledSession(provider, this.settings, (dead) => {
      if (this.sessions.get(provider.address) === dead) this.sessions.delete(provider.address);
    });
    this.sessions.set(provider.address, s);
    return s;
  }

  /**
   * Opens a stream to `provider` once its session is connected. Resolves with the stream; the
   * stream is reset with CANCEL when `signal` aborts.
   */
  async open(provider: Provider, headers: OutgoingHttpHeaders, signal: AbortSignal): Promise<http2.ClientHttp2Stream> {
    for (let attempt = 0; ; attempt++) {
      const pooled = this.sessionFor(provider);
      pooled.hold();
      let stream: http2.ClientHttp2Stream;
      try {
        if (!pooled.connected) await abortable(pooled.ready, signal);
        if (signal.aborted) throw signal.reason;
        stream = pooled.session.request(headers, { endStream: false });
      } catch (e) {
        pooled.release();
        if (signal.aborted) throw signal.reason;
        if (e instanceof RpcError) throw e;
        // The session went away between our check and the request (GOAWAY race): once more on a new one.
        pooled.dead = true;
        this.sessions.delete(provider.address);
        if (attempt === 0) continue;
        throw transportError(provider.address, e, false); // no stream: nothing was sent
      }
      (stream as PostStream)[kSession] = pooled;
      stream.once("close", releasePooled);
      if (signal !== NEVER_ABORTS) {
        const onAbort = () => {
          if (!stream.destroyed) stream.close(http2.constants.NGHTTP2_CANCEL);
        };
        signal.addEventListener("abort", onAbort, { once: true });
        stream.once("close", () => signal.removeEventListener("abort", onAbort));
      }
      return stream;
    }
  }

  /**
   * An extended CONNECT stream (RFC 8441: `headers` carry `:protocol`) on the provider's session,
   * once the server's first SETTINGS arrived; undefined when the server does not advertise
   * SETTINGS_ENABLE_CONNECT_PROTOCOL.
   */
  async openExtendedConnect(provider: Provider, headers: OutgoingHttpHeaders, signal: AbortSignal): Promise<http2.ClientHttp2Stream | undefined> {
    const pooled = this.sessionFor(provider);
    await abortable(pooled.settingsKnown, signal);
    if (pooled.session.remoteSettings.enableConnectProtocol !== true) return undefined;
    return this.open(provider, headers, signal);
  }

  /**
   * A stream on the provider's session when it is connected (no promise, no await: the common
   * case), else undefined.
   */
  openNow(provider: Provider, headers: OutgoingHttpHeaders): http2.ClientHttp2Stream | undefined {
    const pooled = this.sessions.get(provider.address);
    if (!pooled || pooled.dead || !pooled.connected || pooled.session.closed || pooled.session.destroyed) return undefined;
    let stream: http2.ClientHttp2Stream;
    try {
      stream = pooled.session.request(headers, REQUEST_OPTIONS);
    } catch {
      return undefined; // the slow path sorts out a session that just went away
    }
    pooled.hold();
    (stream as PostStream)[kSession] = pooled;
    stream.once("close", releasePooled);
    return stream;
  }

  post(provider: Provider, req: UnaryRequest): Promise<HttpReply> {
    const headers = req.headers[":path"] === undefined ? { ...req.headers, ":method": "POST", ":path": req.path } : req.headers;
    const signal = req.signal;
    const now = signal === NEVER_ABORTS ? this.openNow(provider, headers) : undefined;
    const collect = (stream: http2.ClientHttp2Stream) => new Promise<HttpReply>((resolve, reject) => new H2Post(stream, provider, req, resolve, reject));
    return now ? collect(now) : this.open(provider, headers, signal).then(collect);
  }

  close(): void {
    for (const s of this.sessions.values()) s.session.close();
    this.sessions.clear();
  }
}

const REQUEST_OPTIONS: http2.ClientSessionRequestOptions = Object.freeze({ endStream: false });

/** The post reading a stream; set once per stream (its session is under `kSession`, which the error classification reads too). */
const kPost = Symbol("triple.h2post");
type PostStream = http2.ClientHttp2Stream & { [kSession]?: PooledSession; [kPost]?: H2Post };

function releasePooled(this: PostStream): void {
  this[kSession]?.release();
}

// Listeners shared by every unary post (`this` is the stream): no closures per call.
function postResponse(this: PostStream, h: http2.IncomingHttpHeaders): void {
  const p = this[kPost]!;
  p.status = Number(h[":status"]);
  p.headers = h;
}
function postTrailers(this: PostStream, t: http2.IncomingHttpHeaders): void {
  this[kPost]!.trailers = t;
}
function postData(this: PostStream, c: Buffer): void {
  this[kPost]!.onData(c);
}
function postEnd(this: PostStream): void {
  this[kPost]!.onEnd();
}
function postError(this: PostStream, e: Error): void {
  this[kPost]!.onError(e);
}
function postClose(this: PostStream): void {
  this[kPost]!.onClose();
}

/** One unary POST's response, collected up to `maxBytes`, settled once. */
class H2Post {
  status = 0;
  headers: http2.IncomingHttpHeaders = {};
  trailers: http2.IncomingHttpHeaders | undefined = undefined;
  private first: Buffer | undefined = undefined;
  private chunks: Buffer[] | undefined = undefined;
  private size = 0;
  private settled = false;

  constructor(
    private readonly stream: http2.ClientHttp2Stream,
    private readonly provider: Provider,
    private readonly req: UnaryRequest,
    private readonly resolve: (reply: HttpReply) => void,
    private readonly reject: (err: unknown) => void,
  ) {
    (stream as PostStream)[kPost] = this;
    stream.on("response", postResponse);
    stream.on("trailers", postTrailers);
    stream.on("data", postData);
    stream.on("end", postEnd);
    stream.on("error", postError);
    stream.on("close", postClose);
    stream.end(req.body);
  }

  private finish(err: unknown, reply?: HttpReply): void {
    if (this.settled) return;
    this.settled = true;
    if (err) this.reject(err);
    else this.resolve(reply as HttpReply);
  }

  onData(c: Buffer): void {
    this.size += c.length;
    if (this.size > this.req.maxBytes) {
      this.stream.close(http2.constants.NGHTTP2_CANCEL);
      this.finish(responseTooLarge(this.req.maxBytes));
      return;
    }
    if (this.first === undefined) this.first = c;
    else (this.chunks ??= [this.first]).push(c);
  }

  onEnd(): void {
    const signal = this.req.signal;
    if (signal.aborted) {
      this.finish(signal.reason);
      return;
    }
    if (this.status === 0) {
      this.finish(streamClosedError(this.provider, this.stream));
      return;
    }
    const body = this.chunks ? Buffer.concat(this.chunks, this.size) : (this.first ?? EMPTY);
    this.finish(undefined, { status: this.status, headers: this.headers, body, trailers: this.trailers });
  }

  onError(e: Error): void {
    if (this.settled) return;
    const signal = this.req.signal;
    this.finish(signal.aborted ? signal.reason : streamError(this.provider, this.stream, e));
  }

  onClose(): void {
    if (this.settled) return; // the usual case: 'end' settled it; build no error
    const signal = this.req.signal;
    this.finish(signal.aborted ? signal.reason : streamClosedError(this.provider, this.stream));
  }
}

const EMPTY = Buffer.alloc(0);

function abortable<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal === NEVER_ABORTS) return p;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}
