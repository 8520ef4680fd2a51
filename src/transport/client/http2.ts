import type { OutgoingHttpHeaders } from "node:http";
import * as http2 from "node:http2";
import { NEVER_ABORTS } from "../../client/call-scope.js";
import type { Provider } from "../../client/provider.js";
import { responseTooLarge } from "../../protocol/errors.js";
import { RpcError } from "../../protocol/rpc-error.js";
import { installStreamTable } from "../stream-table.js";
import { connectFailure, isConnectErrorCode, streamClosedError, transportError } from "./errors.js";
import type { HttpReply, TransportSettings, UnaryRequest, UnaryTransport } from "./unary-transport.js";

/** HTTP/2 settings of the transport besides the shared ones. */
export interface Http2Settings extends TransportSettings {
  /** Ping interval, ms; 0 disables keepalive pings. */
  readonly keepaliveMs: number;
  /** A ping unanswered this long drops the session, ms. */
  readonly keepaliveTimeoutMs: number;
}

/** One HTTP/2 connection to a provider, shared by every call to it. */
class PooledSession {
  readonly session: http2.ClientHttp2Session;
  readonly ready: Promise<void>;
  /** No new streams: GOAWAY received, closed, or broken. */
  dead = false;
  /** The connection is established: calls skip waiting on `ready`. */
  connected = false;
  private active = 0;
  private pingTimer: NodeJS.Timeout | undefined;

  constructor(provider: Provider, settings: Http2Settings, onDead: (s: PooledSession) => void) {
    this.session = http2.connect(provider.origin, {
      ...settings.tls,
      settings: { enablePush: false },
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
        clearTimeout(timer);
        resolve();
      });
      s.on("error", (e) => {
        clearTimeout(timer);
        // Before 'connect' this is the provider refusing us; after, streams report their own errors.
        if (!this.connected) reject(isConnectErrorCode(e) ? connectFailure(provider.address, e) : transportError(provider.address, e));
      });
      s.once("close", () => {
        clearTimeout(timer);
        if (!this.connected) reject(transportError(provider.address, new Error("the connection closed before it was established")));
      });
    });
    this.ready.catch(() => {}); // callers await it; an unobserved failure must not crash the process
    const die = () => {
      if (this.dead) return;
      this.dead = true;
      if (this.pingTimer) clearInterval(this.pingTimer);
      onDead(this);
    };
    // After GOAWAY the streams in flight finish; new calls open a new session.
    s.on("goaway", die);
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
        throw transportError(provider.address, e);
      }
      stream.once("close", () => pooled.release());
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

  async post(provider: Provider, req: UnaryRequest): Promise<HttpReply> {
    const { path, headers, body, signal, maxBytes } = req;
    const stream = await this.open(provider, { ...headers, ":method": "POST", ":path": path }, signal);
    return new Promise((resolve, reject) => {
      let status = 0;
      let resHeaders: http2.IncomingHttpHeaders = {};
      const chunks: Buffer[] = [];
      let size = 0;
      let settled = false;
      const finish = (err: unknown, reply?: HttpReply) => {
        if (settled) return;
        settled = true;
        if (err) reject(err);
        else resolve(reply as HttpReply);
      };
      let trailers: http2.IncomingHttpHeaders | undefined;
      stream.on("response", (h) => {
        status = Number(h[":status"]);
        resHeaders = h;
      });
      stream.on("trailers", (t) => {
        trailers = t;
      });
      stream.on("data", (c: Buffer) => {
        size += c.length;
        if (size > maxBytes) {
          stream.close(http2.constants.NGHTTP2_CANCEL);
          finish(responseTooLarge(maxBytes));
          return;
        }
        chunks.push(c);
      });
      stream.on("end", () => {
        if (signal.aborted) return finish(signal.reason);
        if (status === 0) return finish(streamClosedError(provider, stream.rstCode));
        finish(undefined, { status, headers: resHeaders, body: Buffer.concat(chunks, size), trailers });
      });
      stream.on("error", (e) => finish(signal.aborted ? signal.reason : transportError(provider.address, e)));
      stream.on("close", () => {
        if (signal.aborted) return finish(signal.reason);
        finish(streamClosedError(provider, stream.rstCode));
      });
      stream.end(body);
    });
  }

  close(): void {
    for (const s of this.sessions.values()) s.session.close();
    this.sessions.clear();
  }
}

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
