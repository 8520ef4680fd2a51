// Owns `registerMemoryEndpoint`, `memoryConnection`. Registers an in-memory server; returns its
// name (`memory://<name>` reaches it) and how to remove it. Must not change: every bound on what a
// peer can make us hold (docs/security.md).
import { Duplex } from "node:stream";

/**
 * In-memory connections: a server registers under a name, and a client whose provider is
 * `memory://<name>` connects to it through a pair of linked streams instead of a socket. Every
 * byte still goes through node's HTTP/1.1 or HTTP/2 on both sides, so every protocol and every
 * stage of the server (binding, validation, interceptors, errors, streams) runs unchanged.
 */

/** Accepts one in-memory connection: the server's end of the pair, and the HTTP version the client speaks. */
export type MemoryAcceptor = (serverEnd: Duplex, httpVersion: "1.1" | "2") => void;

const endpoints = new Map<string, MemoryAcceptor>();
let next = 0;

/** Registers an in-memory server; returns its name (`memory://<name>` reaches it) and how to remove it. */
export function registerMemoryEndpoint(accept: MemoryAcceptor): { name: string; remove(): void } {
  const name = `triple-memory-${++next}`;
  endpoints.set(name, accept);
  return { name, remove: () => endpoints.delete(name) };
}

/** One end of a linked pair: what is written to it is read from the other end. */
class PairEnd extends Duplex {
  other!: PairEnd;
  private waiting: (() => void) | undefined;

  override _read(): void {
    const w = this.waiting;
    this.waiting = undefined;
    w?.();
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    // Backpressure: wait until the other end's reader asks for more.
    if (this.other.push(chunk)) cb();
    else this.other.waiting = () => cb();
  }

  override _final(cb: (err?: Error | null) => void): void {
    this.other.push(null);
    cb();
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    const o = this.other;
    if (!o.destroyed) {
      o.push(null);
      o.destroy();
    }
    cb(err);
  }

  // Socket methods node:http and node:http2 call on their connections.
  setNoDelay(): this {
    return this;
  }
  setKeepAlive(): this {
    return this;
  }
  setTimeout(): this {
    return this;
  }
  ref(): this {
    return this;
  }
  unref(): this {
    return this;
  }
  get remoteAddress(): string {
    return "memory";
  }
  get remotePort(): number {
    return 0;
  }
}

/** Two linked duplex streams (node 22's `duplexPair`). */
function duplexPair(): [Duplex, Duplex] {
  const a = new PairEnd();
  const b = new PairEnd();
  a.other = b;
  b.other = a;
  return [a, b];
}

/**
 * The client's end of a new connection to the in-memory server `name`; a stream that fails with
 * ECONNREFUSED when there is none (a closed test server), as a socket would.
 */
export function memoryConnection(name: string, httpVersion: "1.1" | "2"): Duplex {
  const [client, server] = duplexPair();
  const accept = endpoints.get(name);
  if (accept) accept(server, httpVersion);
  else {
    process.nextTick(() =>
      client.destroy(Object.assign(new Error(`no in-memory server named ${name} (closed?)`), { code: "ECONNREFUSED", syscall: "connect" })),
    );
  }
  return client;
}
