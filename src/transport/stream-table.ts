// Owns `StreamTable`, `installStreamTable`, `openStreamCount`. A drop-in for the `Map<streamId,
// Http2Stream>` that node:http2 keeps inside every session (`session[kState].streams`), without the
// garbage-collection cost of a busy `Map`. Must not change: every bound on what a peer can make us
// hold (docs/security.md).
import type * as http2 from "node:http2";
import { isMap } from "node:util/types";

/**
 * A drop-in for the `Map<streamId, Http2Stream>` that node:http2 keeps inside every session
 * (`session[kState].streams`), without the garbage-collection cost of a busy `Map`.
 *
 * Why: a session adds and deletes one entry per stream, so its Map rehashes every few dozen
 * streams. V8 keeps a link from each retired hash table to its successor (for live iterators),
 * and retired tables keep their old entries. Once one retired table is promoted to the old
 * generation, it holds the next (young) table and through it the streams of that moment alive
 * across scavenges, so they are promoted too, their retired table with them, and so on: a chain
 * that only a full GC breaks, and that re-forms on its own. Under `h2load -c16 -m32` that is
 * ~1.3 MB promoted per scavenge and a full GC every ~0.6 s, in bare node:http2 as much as here.
 * With this table (integer keys on a null-prototype object, whose retired backing stores link
 * to nothing) promotion drops to ~0.01 MB per scavenge. bench/README.md has the measurements.
 *
 * It implements the whole `Map` surface node could use on it (node 20 uses get, set, delete,
 * size and forEach), in insertion order like a Map for the ids node assigns (ascending).
 */
export class StreamTable<V> {
  private byId: Record<number, V> = Object.create(null);
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(id: number): V | undefined {
    return this.byId[id];
  }

  has(id: number): boolean {
    return this.byId[id] !== undefined;
  }

  set(id: number, value: V): this {
    if (this.byId[id] === undefined) this.count++;
    this.byId[id] = value;
    return this;
  }

  delete(id: number): boolean {
    if (this.byId[id] === undefined) return false;
    delete this.byId[id];
    this.count--;
    return true;
  }

  clear(): void {
    this.byId = Object.create(null);
    this.count = 0;
  }

  forEach(fn: (value: V, id: number, table: this) => void): void {
    // Over a snapshot: node's callbacks (stream.destroy) delete entries while it iterates.
    for (const [id, value] of this.snapshot()) fn(value, id, this);
  }

  keys(): IterableIterator<number> {
    return this.snapshot()
      .map(([id]) => id)
      [Symbol.iterator]();
  }

  values(): IterableIterator<V> {
    return this.snapshot()
      .map(([, value]) => value)
      [Symbol.iterator]();
  }

  entries(): IterableIterator<[number, V]> {
    return this.snapshot()[Symbol.iterator]();
  }

  [Symbol.iterator](): IterableIterator<[number, V]> {
    return this.entries();
  }

  /** Integer keys enumerate in ascending order: the order node inserted them in. */
  private snapshot(): Array<[number, V]> {
    const out: Array<[number, V]> = [];
    for (const k in this.byId) out.push([Number(k), this.byId[k as unknown as number]!]);
    return out;
  }
}

let stateKey: symbol | null | undefined;

/**
 * Puts a {@link StreamTable} in place of a fresh session's stream Map (with `adopt`, of a session
 * that already has streams, which move over). Does nothing (and never tries again) on a node
 * whose sessions do not have the expected private shape: a `Map` (node's own `SafeMap`, empty
 * unless `adopt`) at `session[Symbol(state)].streams`.
 */
export function installStreamTable(session: http2.Http2Session, adopt = false): void {
  if (stateKey === null) return;
  const s = session as unknown as Record<symbol, { streams?: unknown } | undefined>;
  stateKey ??= Object.getOwnPropertySymbols(session).find((k) => k.description === "state") ?? null;
  const state = stateKey === null ? undefined : s[stateKey];
  if (!state || !isMap(state.streams) || (!adopt && state.streams.size !== 0)) {
    // A table already in place (adopt on a session seen before) is fine; anything else is a shape we do not know.
    if (!(adopt && state?.streams instanceof StreamTable)) stateKey = null;
    return;
  }
  const table = new StreamTable<unknown>();
  // `adopt`: a session that already has streams (a server someone else owns, seen mid-session):
  // they move over in id order, synchronously, so node never sees the difference.
  for (const [id, stream] of state.streams as Map<number, unknown>) table.set(id, stream);
  state.streams = table;
}

/**
 * How many streams a session has open (its stream table's size: node's own Map or a
 * {@link StreamTable}), or undefined on a node whose sessions do not have that private shape.
 */
export function openStreamCount(session: http2.Http2Session): number | undefined {
  if (stateKey === null) return undefined;
  stateKey ??= Object.getOwnPropertySymbols(session).find((k) => k.description === "state") ?? null;
  if (stateKey === null) return undefined;
  const streams = (session as unknown as Record<symbol, { streams?: { size?: unknown } } | undefined>)[stateKey]?.streams;
  return typeof streams?.size === "number" ? streams.size : undefined;
}
