// Owns `isThenable`, `iteratorOf`, `invokeHandler`, `ResponsePump`. True for promises and other
// thenables a handler may return. Must not change: the rules every protocol relies on
// (docs/architecture.md).
import { runWithTag } from "./call-tag.js";
import type { CallContext } from "./context.js";
import type { RegisteredMethod } from "./router.js";

/** True for promises and other thenables a handler may return. */
function isThenable(x: unknown): x is PromiseLike<unknown> {
  return x !== null && typeof x === "object" && typeof (x as PromiseLike<unknown>).then === "function";
}

/** The iterator of a streaming handler's result (AsyncIterable or Iterable), if it is one. */
export function iteratorOf(x: unknown): AsyncIterator<unknown> | Iterator<unknown> | undefined {
  if (x === null || (typeof x !== "object" && typeof x !== "function")) return undefined;
  const o = x as Partial<AsyncIterable<unknown> & Iterable<unknown>>;
  if (typeof o[Symbol.asyncIterator] === "function") return o[Symbol.asyncIterator]!();
  if (typeof o[Symbol.iterator] === "function") return o[Symbol.iterator]!();
  return undefined;
}

/** Receives what a handler returned (awaited when it is a promise) or threw. */
export interface HandlerOutcome {
  handlerReturned(value: unknown): void;
  handlerFailed(reason: unknown): void;
}

/**
 * Calls a handler through its invoker and hands the outcome to `to`: synchronously for a plain
 * value or a throw, after one `.then` for a promise. Every protocol's call uses it. What the
 * handler throws reaches `to` as an RpcError (`route.errors`: unexpected errors are logged, and
 * masked if the server says so). With telemetry on (`ctx.observer`), the handler runs inside the
 * call's span context, and so do the outcome and a stream's pump.
 */
export function invokeHandler(route: RegisteredMethod, ctx: CallContext, input: unknown[], to: HandlerOutcome): void {
  // A call carrying Dubbo's routing tag: the handler's own calls carry it on (see call-tag.ts).
  const tag = ctx.tag;
  if (tag !== undefined) {
    runWithTag(tag, () => invokeObserved(route, ctx, input, to));
    return;
  }
  invokeObserved(route, ctx, input, to);
}

function invokeObserved(route: RegisteredMethod, ctx: CallContext, input: unknown[], to: HandlerOutcome): void {
  const obs = ctx.observer;
  if (obs === undefined) callHandler(route, ctx, input, to);
  else obs.within(callHandler, route, ctx, input, to);
}

function callHandler(route: RegisteredMethod, ctx: CallContext, input: unknown[], to: HandlerOutcome): void {
  let result: unknown;
  try {
    result = route.invoke(ctx, input);
  } catch (e) {
    to.handlerFailed(route.errors.toRpcError(e, ctx));
    return;
  }
  if (isThenable(result))
    result.then(
      (v) => to.handlerReturned(v),
      (e) => to.handlerFailed(route.errors.toRpcError(e, ctx)),
    );
  else to.handlerReturned(result);
}

/** Where a {@link ResponsePump} sends a streaming handler's messages: one protocol's call. */
export interface PumpTarget {
  /** True once the call is over: the pump stops without sending more. */
  readonly finished: boolean;
  /** Encodes and writes one message; false means wait for `onDrain`. Throwing ends the stream. */
  sendMessage(value: unknown): boolean;
  /** Calls `fn` once the transport can take more. */
  onDrain(fn: () => void): void;
  /** The stream ended (`err` undefined) or failed: what the iterator threw, as an RpcError. */
  streamDone(err: unknown): void;
}

/**
 * Pulls a streaming handler's messages and writes them, waiting for 'drain' when the peer is
 * slow; shared by gRPC's response streams and Triple HTTP's Server-Sent Events. `stop()` ends the
 * handler's iterator when the call ends first (cancellation, deadline, an error). What the
 * iterator throws goes through the route's `errors` (logged when unexpected), like a handler's throw.
 */
export class ResponsePump {
  private iterator: AsyncIterator<unknown> | Iterator<unknown> | undefined = undefined;
  private drainWaiter: (() => void) | undefined = undefined;

  constructor(
    private readonly target: PumpTarget,
    private readonly route: RegisteredMethod,
    private readonly ctx: CallContext,
  ) {}

  /** Starts pumping `it`; if the call is already over, stops the iterator instead. */
  start(it: AsyncIterator<unknown> | Iterator<unknown>): void {
    this.iterator = it;
    if (this.target.finished) {
      this.stop();
      return;
    }
    void this.run(it);
  }

  private async run(it: AsyncIterator<unknown> | Iterator<unknown>): Promise<void> {
    const t = this.target;
    try {
      for (;;) {
        const r = await it.next();
        if (t.finished) return;
        if (r.done) break;
        if (!t.sendMessage(r.value)) {
          await new Promise<void>((resolve) => {
            this.drainWaiter = resolve;
            t.onDrain(resolve);
          });
          this.drainWaiter = undefined;
          if (t.finished) return;
        }
      }
      this.iterator = undefined;
      t.streamDone(undefined);
    } catch (e) {
      this.iterator = undefined;
      t.streamDone(this.route.errors.toRpcError(e, this.ctx));
    }
  }

  /** Ends the handler's iterator (if it is still running) and releases a pending drain wait. */
  stop(): void {
    this.drainWaiter?.();
    const it = this.iterator;
    this.iterator = undefined;
    if (it && typeof it.return === "function") {
      // A handler stuck in an await only sees this when it resumes; its signal already fired.
      Promise.resolve()
        .then(() => it.return!())
        .catch(() => {});
    }
  }

  /** Releases a pending drain wait without stopping the iterator (the call ended cleanly). */
  release(): void {
    this.drainWaiter?.();
  }
}
