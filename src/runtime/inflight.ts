// Owns `InflightCalls`. The calls in progress, for graceful shutdown: an intrusive doubly linked
// list through the contexts themselves, so adding and removing a call allocates nothing (a Map …
// Must not change: the rules every protocol relies on (docs/architecture.md).
import type { Exchange } from "../transport/server/exchange.js";
import type { CallContext } from "./context.js";

/**
 * The calls in progress, for graceful shutdown: an intrusive doubly linked list through the
 * contexts themselves, so adding and removing a call allocates nothing (a Map would allocate an
 * entry and rehash as hundreds of concurrent calls come and go).
 */
export class InflightCalls {
  private head: CallContext | undefined = undefined;
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(ctx: CallContext, ex: Exchange): void {
    if (ctx.inflightExchange) return;
    ctx.inflightExchange = ex;
    ctx.inflightPrev = undefined;
    ctx.inflightNext = this.head;
    if (this.head) this.head.inflightPrev = ctx;
    this.head = ctx;
    this.count++;
  }

  /** Removes a call; false when it was not (or no longer) in the list. */
  remove(ctx: CallContext): boolean {
    if (!ctx.inflightExchange) return false;
    const { inflightPrev: prev, inflightNext: next } = ctx;
    if (prev) prev.inflightNext = next;
    else this.head = next;
    if (next) next.inflightPrev = prev;
    ctx.inflightPrev = ctx.inflightNext = ctx.inflightExchange = undefined;
    this.count--;
    return true;
  }

  /** A snapshot of the calls in progress and their exchanges. */
  entries(): [CallContext, Exchange][] {
    const out: [CallContext, Exchange][] = [];
    for (let c = this.head; c; c = c.inflightNext) out.push([c, c.inflightExchange!]);
    return out;
  }
}
