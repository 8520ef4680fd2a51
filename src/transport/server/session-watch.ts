import type * as http2 from "node:http2";
import { exchangeOfStream, type Http2Exchange } from "./exchange.js";

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

/** What the body sweep remembers of a stream it saw waiting for its request body. */
interface Waiting {
  /** The stream's receive window and its buffered bytes at the last sweep: DATA frames change them. */
  window: number;
  buffered: number;
  since: number;
}

/**
 * The request-body timeout of HTTP/2 (what `requestTimeoutMs` is to HTTP/1.1, as an inactivity
 * limit so long-lived streams live): a stream whose request has not ended, to which the server
 * has not started answering, and that received no DATA for `limitMs`, is expired. Run from the
 * listener's sweep: nothing per request, one look per open stream per sweep.
 */
export class BodyWatch {
  private readonly waiting = new WeakMap<http2.Http2Stream, Waiting>();

  constructor(
    private readonly limitMs: number,
    private readonly expire: (ex: Http2Exchange) => void,
  ) {}

  sweep(session: http2.Http2Session, now: number): void {
    const streams = streamsOf(session);
    if (!streams) return;
    for (const stream of streams) this.check(stream as http2.ServerHttp2Stream, now);
  }

  private check(stream: http2.ServerHttp2Stream, now: number): void {
    // Answered (or answering), gone, or paused by the server itself (its handler is behind): not waiting on the peer.
    if (stream.headersSent || stream.destroyed || stream.readableFlowing === false) return;
    const st = stream.state;
    if (st.remoteClose) return; // the whole request arrived
    const window = st.localWindowSize ?? 0;
    const buffered = stream.readableLength;
    const w = this.waiting.get(stream);
    if (!w) {
      this.waiting.set(stream, { window, buffered, since: now });
      return;
    }
    if (w.window !== window || w.buffered !== buffered) {
      w.window = window;
      w.buffered = buffered;
      w.since = now;
      return;
    }
    if (now - w.since < this.limitMs) return;
    const ex = exchangeOfStream(stream);
    if (ex) this.expire(ex);
    else stream.close(0x8 /* CANCEL */);
  }
}
