// Owns `isDeadSession`, `BodyWatch`. The limits on request bodies the listener's sweep enforces,
// nothing per request: one look per open HTTP/2 stream and per busy HTTP/1.1 connection per sweep.
// Must not change: every per-connection and per-exchange bound (docs/security.md).
import type * as http2 from "node:http2";
import type * as net from "node:net";
import { exchangeOfSocket, exchangeOfStream, type Http1Exchange, type Http2Exchange } from "./exchange.js";

/**
 * What node:http2 does not tell: whether nghttp2 gave up on a session. After a fatal protocol
 * error (a malformed frame) nghttp2 queues GOAWAY and then wants neither to read nor to write;
 * node stops reading the socket and never notices the peer closing it, so the socket would stay
 * until the idle timeout. Node's private session handle answers `hasPendingData()` (want_read ||
 * want_write); false means the GOAWAY is out and the session is dead. On a node without that
 * handle this answers false and the idle sweep alone closes such sockets.
 */
let handleKey: symbol | null | undefined;

interface SessionHandle {
  hasPendingData?: () => boolean;
}

export function isDeadSession(session: http2.Http2Session): boolean {
  if (handleKey === null || session.destroyed) return false;
  handleKey ??= Object.getOwnPropertySymbols(session).find((k) => k.description === "kHandle") ?? null;
  if (handleKey === null) return false;
  const handle = (session as unknown as Record<symbol, SessionHandle | undefined>)[handleKey];
  if (typeof handle?.hasPendingData !== "function") return false;
  try {
    return !handle.hasPendingData();
  } catch {
    return false;
  }
}

let stateKey: symbol | null | undefined;

/** The open streams of a session (node's own table, or the StreamTable put in its place). */
function streamsOf(session: http2.Http2Session): Iterable<http2.Http2Stream> | undefined {
  if (stateKey === null) return undefined;
  stateKey ??= Object.getOwnPropertySymbols(session).find((k) => k.description === "state") ?? null;
  if (stateKey === null) return undefined;
  const state = (session as unknown as Record<symbol, { streams?: { values(): Iterable<http2.Http2Stream> } } | undefined>)[stateKey];
  return state?.streams?.values();
}

/** What the body sweep remembers of a request it saw waiting for its body. */
interface Waiting {
  /** The stream's receive window and its buffered bytes at the last sweep: DATA frames change them. */
  window: number;
  buffered: number;
  since: number;
  /** When the sweep first saw the request (the whole-request time limit counts from here). */
  readonly first: number;
  /**
   * The rate window's samples, oldest first, as (time, body bytes received) pairs, taken by the
   * sweeps (at most eight a window) while the server reads the body: the window slides, so a body that slows down is judged on
   * its last `windowMs` alone. Restarted whenever the server stops reading.
   */
  samples: number[];
}

/** Why the body sweep gave up on a request. */
export type BodyExpiry = "idle" | "total" | "rate";

/** The limits on how a request body arrives; 0 switches one off. */
export interface BodyRules {
  /** HTTP/2: no DATA for this long (`bodyIdleTimeoutMs`). */
  readonly idleMs: number;
  /** HTTP/2: the whole request (`requestTimeoutMs`; node:http applies it to HTTP/1.1). */
  readonly totalMs: number;
  /** Both versions: fewer body bytes than this per second over a window (`minBodyBytesPerSecond`). */
  readonly minRate: number;
  /** The rate window (`bodyRateWindowMs`); the first one is the grace period. */
  readonly windowMs: number;
}

/**
 * The limits on request bodies the listener's sweep enforces, nothing per request: one look per
 * open HTTP/2 stream and per busy HTTP/1.1 connection per sweep. A request is watched while its
 * body has not ended and the server has not started answering:
 *
 * - HTTP/2, no DATA for `idleMs` (what `requestTimeoutMs` is to HTTP/1.1, as an inactivity limit,
 *   so long-lived streams live);
 * - HTTP/2, the whole request longer than `totalMs` (HTTP/1.1: node:http's own `requestTimeout`);
 * - both versions, fewer than `minRate` body bytes a second over the last `windowMs`, a sliding
 *   window (a body sent fast and then a byte at a time would live for hours under any average
 *   since its start).
 *
 * A body the server is not reading (paused by backpressure, or not read yet) is not the peer's
 * fault: its idle and rate clocks restart. Client and bidi streams (`Exchange.streamingBody`)
 * are exempt from the total and the rate.
 */
export class BodyWatch {
  private readonly waiting = new WeakMap<object, Waiting>();

  constructor(
    private readonly rules: BodyRules,
    private readonly expire: (ex: Http2Exchange | Http1Exchange, why: BodyExpiry) => void,
  ) {}

  sweep(session: http2.Http2Session, now: number): void {
    const streams = streamsOf(session);
    if (!streams) return;
    for (const stream of streams) this.check(stream as http2.ServerHttp2Stream, now);
  }

  private check(stream: http2.ServerHttp2Stream, now: number): void {
    // Answered (or answering), gone, or the whole request arrived: not waiting on the peer.
    if (stream.headersSent || stream.destroyed || stream.state.remoteClose) return;
    const ex = exchangeOfStream(stream);
    const received = ex?.received ?? 0;
    const window = stream.state.localWindowSize ?? 0;
    const buffered = stream.readableLength;
    const w = this.waiting.get(stream);
    if (!w) {
      this.waiting.set(stream, { window, buffered, since: now, first: now, samples: [now, received] });
      return;
    }
    const bounded = ex !== undefined && !ex.streaming;
    const { idleMs, totalMs } = this.rules;
    if (bounded && totalMs > 0 && now - w.first >= totalMs) {
      this.fire(stream, ex, "total");
      return;
    }
    if (stream.readableFlowing === false) {
      // Paused by the server itself (its handler is behind): not waiting on the peer.
      w.since = now;
      w.samples = [now, received];
      return;
    }
    if (w.window !== window || w.buffered !== buffered) {
      w.window = window;
      w.buffered = buffered;
      w.since = now;
    } else if (idleMs > 0 && now - w.since >= idleMs) {
      this.fire(stream, ex, "idle");
      return;
    }
    if (bounded && this.tooSlow(w, received, stream.readableFlowing === true, now)) this.fire(stream, ex, "rate");
  }

  /** HTTP/1.1: the request a connection is receiving, if its body is still arriving. */
  sweepHttp1(socket: net.Socket, now: number): void {
    const ex = exchangeOfSocket(socket);
    if (ex === undefined || ex.streaming || ex.headersSent || this.rules.minRate <= 0) return;
    const req = ex.req;
    if (req.complete || req.destroyed) return;
    // One request at a time per connection: the socket's counter is the body's (and its headers').
    const received = socket.bytesRead;
    const w = this.waiting.get(req);
    if (!w) {
      this.waiting.set(req, { window: 0, buffered: 0, since: now, first: now, samples: [now, received] });
      return;
    }
    if (this.tooSlow(w, received, req.readableFlowing === true, now)) this.expire(ex, "rate");
  }

  /**
   * True when the body brought fewer than `minRate` bytes a second over the last `windowMs` (the
   * first window is the grace); a body the server is not reading restarts the window.
   */
  private tooSlow(w: Waiting, received: number, reading: boolean, now: number): boolean {
    const { minRate, windowMs } = this.rules;
    if (minRate <= 0) return false;
    if (!reading) {
      w.samples = [now, received];
      return false;
    }
    const s = w.samples;
    // Eight samples a window at most, whatever the sweep's pace.
    if (now - s[s.length - 2] >= windowMs / 8) s.push(now, received);
    // The base: the newest sample at least a window old (older ones are dropped).
    let base = -1;
    for (let i = 0; i < s.length; i += 2) if (now - s[i] >= windowMs) base = i;
    if (base < 0) return false;
    if (base > 0) s.splice(0, base);
    return (received - s[1]) * 1000 < minRate * (now - s[0]);
  }

  private fire(stream: http2.ServerHttp2Stream, ex: Http2Exchange | undefined, why: BodyExpiry): void {
    if (ex) this.expire(ex, why);
    else stream.close(0x8 /* CANCEL */);
  }
}
