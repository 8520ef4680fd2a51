// Owns `DEFAULT_MAX_CONNECTIONS_PER_PEER`, `defaultMaxConnections`, `ConnectionGuard`. Default
// `maxConnectionsPerPeer`. Must not change: every per-connection and per-exchange bound
// (docs/security.md).
import * as fs from "node:fs";
import type * as net from "node:net";
import { type Clock, systemClock } from "../clock.js";

/** Why a new connection was refused at accept. */
export type ConnectionRefusal = "maxConnections" | "maxConnectionsPerPeer";

/** What the guard reports, at most once per {@link REFUSAL_LOG_INTERVAL_MS}. */
export interface RefusalReport {
  readonly reason: ConnectionRefusal;
  readonly limit: number;
  /** Connections refused since the previous report (this one included). */
  readonly refused: number;
  /** The peer of the refusal that triggered this report. */
  readonly peer: string;
}

/** How often at most the guard reports refusals. */
const REFUSAL_LOG_INTERVAL_MS = 60_000;

/** Default `maxConnectionsPerPeer`. */
export const DEFAULT_MAX_CONNECTIONS_PER_PEER = 1_000;

/**
 * Default `maxConnections`: 10 000, or 80 % of the process's open-file limit when that is lower
 * (Linux: read once from /proc/self/limits), so a flood meets our cap before EMFILE.
 */
export function defaultMaxConnections(): number {
  let cap = 10_000;
  try {
    const m = /^Max open files\s+(\d+)/m.exec(fs.readFileSync("/proc/self/limits", "latin1"));
    if (m) cap = Math.min(cap, Math.max(64, Math.floor(Number(m[1]) * 0.8)));
  } catch {
    // not Linux: keep the fixed default
  }
  return cap;
}

/**
 * What identifies a connection for the guard: its remote address and port, the same for the TCP
 * socket admitted at accept and the TLS socket the listener later tracks (and evicts) over it;
 * the socket itself when it has no port (already closed).
 */
function connectionKey(socket: net.Socket): unknown {
  const port = socket.remotePort;
  return port === undefined ? socket : `${socket.remoteAddress}|${port}`;
}

/**
 * Closes the connection idle the longest (of `peer`, or of any peer when undefined) to make room
 * for a new one, and returns it; undefined when every connection carries a request.
 */
export type Evict = (peer: string | undefined) => net.Socket | undefined;

/**
 * Counts open connections, in total and per remote address. A new connection past either cap
 * takes the place of the connection idle the longest (of the same address for the per-address
 * cap), which is closed; when none is idle, the new one is closed at accept. Per connection,
 * never per request: one map update on accept and one on close.
 */
export class ConnectionGuard {
  /** Connections admitted and not yet closed. */
  open = 0;
  /** Connections refused since the start. */
  refused = 0;
  /** Idle connections closed to admit new ones since the start. */
  evicted = 0;
  /** Set by the listener, which knows which connections are idle. */
  evict: Evict | undefined = undefined;
  private readonly perPeer = new Map<string, number>();
  /** The peer each admitted connection was counted under, by {@link connectionKey}. */
  private readonly admitted = new Map<unknown, string>();
  private unreported = 0;
  private lastReport = -Infinity;

  constructor(
    readonly maxConnections: number,
    readonly maxPerPeer: number,
    private readonly report: ((r: RefusalReport) => void) | undefined,
    /** What the report's interval is measured on (the server's `clock`). */
    private readonly clock: Clock = systemClock,
  ) {}

  /** Admits `socket` (released when it closes) or destroys it; true when admitted. */
  admit(socket: net.Socket): boolean {
    const peer = socket.remoteAddress ?? "";
    if (this.open >= this.maxConnections && !this.makeRoom(undefined)) return this.refuse(socket, "maxConnections", this.maxConnections, peer);
    if ((this.perPeer.get(peer) ?? 0) >= this.maxPerPeer && !this.makeRoom(peer)) {
      return this.refuse(socket, "maxConnectionsPerPeer", this.maxPerPeer, peer);
    }
    this.open++;
    this.perPeer.set(peer, (this.perPeer.get(peer) ?? 0) + 1);
    const key = connectionKey(socket);
    this.admitted.set(key, peer);
    socket.once("close", () => this.closed(key));
    return true;
  }

  /** Closes an idle connection for a new one; its slot is free at once (its socket may take a moment to close). */
  private makeRoom(peer: string | undefined): boolean {
    const victim = this.evict?.(peer);
    if (victim === undefined) return false;
    this.evicted++;
    this.closed(connectionKey(victim));
    return true;
  }

  /** A connection closed (or was evicted): its slot is released, once. */
  private closed(key: unknown): void {
    const peer = this.admitted.get(key);
    if (peer === undefined) return;
    this.admitted.delete(key);
    this.release(peer);
  }

  private release(peer: string): void {
    this.open--;
    const n = (this.perPeer.get(peer) ?? 1) - 1;
    if (n <= 0) this.perPeer.delete(peer);
    else this.perPeer.set(peer, n);
  }

  private refuse(socket: net.Socket, reason: ConnectionRefusal, limit: number, peer: string): false {
    socket.destroy();
    this.count(reason, limit, peer);
    return false;
  }

  private count(reason: ConnectionRefusal, limit: number, peer: string): void {
    this.refused++;
    this.unreported++;
    const now = this.clock.now();
    if (now - this.lastReport < REFUSAL_LOG_INTERVAL_MS) return;
    this.lastReport = now;
    const refused = this.unreported;
    this.unreported = 0;
    this.report?.({ reason, limit, refused, peer });
  }
}
