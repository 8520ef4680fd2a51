// Owns `newActivity`, `watchSession`, `countStream`, `idleSince`, … Ties a session to its
// connection's activity, so that its streams are counted. Must not change: every per-connection and
// per-exchange bound (docs/security.md).
import type * as http2 from "node:http2";
import type * as net from "node:net";
import { openStreamCount } from "../stream-table.js";

/** What the listener's sweep remembers of a connection. */
export interface SocketActivity {
  /** bytesRead + bytesWritten at the last sweep that saw them change. */
  bytes: number;
  /** When they last changed. */
  since: number;
  /** The HTTP/2 session on this socket, if any. */
  session: http2.ServerHttp2Session | undefined;
  /** nghttp2 gave up on the session (fatal protocol error, GOAWAY sent): the socket is being closed. */
  dead: boolean;
  /** The listener is closing it (idle, or evicted for a new connection): never picked twice. */
  closing: boolean;
  /** HTTP/2 streams the peer opened (counted as they open). */
  streams: number;
  /** `streams` at the last look. */
  streamsSeen: number;
  /** When the connection was last seen carrying a request (HTTP/2: a stream open, or one opened since the last look). */
  requestSince: number;
}

export function newActivity(now: number): SocketActivity {
  return { bytes: 0, since: now, session: undefined, dead: false, closing: false, streams: 0, streamsSeen: 0, requestSince: now };
}

const kActivity = Symbol("triple.activity");
type TaggedSession = http2.ServerHttp2Session & { [kActivity]?: SocketActivity };

/** Ties a session to its connection's activity, so that its streams are counted. */
export function watchSession(session: http2.ServerHttp2Session, a: SocketActivity): void {
  a.session = session;
  (session as TaggedSession)[kActivity] = a;
}

/** Counts a stream the peer opened (one property bump per stream). */
export function countStream(stream: http2.ServerHttp2Stream): void {
  const a = (stream.session as TaggedSession | undefined)?.[kActivity];
  if (a !== undefined) a.streams++;
}

/**
 * Since when the connection has carried no request. HTTP/2: since its last stream (open now, or
 * opened since the previous look), and never later than its last byte: a peer that sends only
 * PINGs or SETTINGS (which node:http2 answers itself) moves bytes but carries no request, while a
 * stream open without a byte either way for the idle time is idle too. HTTP/1.1, and a
 * connection not yet told apart: its last byte (node:http closes keep-alive connections idle
 * between requests after 5 s itself). A node whose sessions lack the expected private shape
 * (no stream count) falls back to bytes alone.
 */
export function idleSince(a: SocketActivity, now: number): number {
  const s = a.session;
  if (s === undefined) return a.since;
  const open = openStreamCount(s);
  if (open === undefined) return a.since;
  if (open > 0 || a.streams !== a.streamsSeen) {
    a.streamsSeen = a.streams;
    a.requestSince = now;
  }
  return Math.min(a.since, a.requestSince);
}

/** The response an HTTP/1.1 socket is writing, if any (node:http's own field). */
interface Http1Socket {
  _httpMessage?: { writableFinished?: boolean } | null;
}

/**
 * True while the connection carries a request: an HTTP/2 stream open (or one opened since the
 * last look), an HTTP/1.1 response not finished. A connection whose shape is unknown counts as
 * busy: it is never evicted.
 */
function carriesRequest(socket: net.Socket, a: SocketActivity): boolean {
  if (a.session !== undefined) {
    const open = openStreamCount(a.session);
    return open === undefined || open > 0 || a.streams !== a.streamsSeen;
  }
  const res = (socket as net.Socket & Http1Socket)._httpMessage;
  return res != null && res.writableFinished !== true;
}

/** How long a list of idle connections serves evictions before it is drawn up again, ms. */
const CANDIDATES_TTL_MS = 250;
/** When the list has no idle connection left (for the peer), how old it must be to be drawn up again, ms. */
const MISS_RELIST_MS = 50;

/**
 * Makes room when a connection cap is reached: closes the connection idle the longest (of one
 * peer for the per-peer cap, of any for the total), so that idle connections never lock new
 * peers out. The idle ones are listed at most every {@link CANDIDATES_TTL_MS} (one pass over the
 * connections, sorted; again after {@link MISS_RELIST_MS} when it ran dry), and each pick is
 * checked again, so a flood of new connections costs one pass per interval rather than one per
 * connection.
 */
export class IdleEvictor {
  /** Idle connections, the longest idle last. */
  private all: net.Socket[] = [];
  private byPeer = new Map<string, net.Socket[]>();
  private listedAt = -Infinity;

  constructor(
    private readonly sockets: ReadonlyMap<net.Socket, SocketActivity>,
    /** Closes an idle connection (GOAWAY first on HTTP/2). */
    private readonly close: (socket: net.Socket, a: SocketActivity) => void,
  ) {}

  /** Closes the longest-idle connection (of `peer` when given); returns it, or undefined when none is idle. */
  evict(peer: string | undefined, now: number): net.Socket | undefined {
    if (now - this.listedAt >= CANDIDATES_TTL_MS) this.list(now);
    const found = this.pick(peer);
    if (found !== undefined || now - this.listedAt < MISS_RELIST_MS) return found;
    // Connections admitted or gone idle since the list was drawn up.
    this.list(now);
    return this.pick(peer);
  }

  private pick(peer: string | undefined): net.Socket | undefined {
    const list = peer === undefined ? this.all : this.byPeer.get(peer);
    while (list !== undefined && list.length > 0) {
      const socket = list.pop() as net.Socket;
      const a = this.sockets.get(socket);
      if (a === undefined || a.closing || socket.destroyed || carriesRequest(socket, a)) continue;
      a.closing = true;
      this.close(socket, a);
      return socket;
    }
    return undefined;
  }

  private list(now: number): void {
    this.listedAt = now;
    const idle: Array<[net.Socket, number]> = [];
    for (const [socket, a] of this.sockets) {
      if (a.closing || a.dead || socket.destroyed) continue;
      const since = idleSince(a, now);
      if (!carriesRequest(socket, a)) idle.push([socket, since]);
    }
    idle.sort((x, y) => y[1] - x[1]);
    this.all = idle.map(([s]) => s);
    this.byPeer = new Map();
    for (const s of this.all) {
      const peer = s.remoteAddress ?? "";
      const l = this.byPeer.get(peer);
      if (l) l.push(s);
      else this.byPeer.set(peer, [s]);
    }
  }
}
