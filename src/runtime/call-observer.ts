// Owns `CallObserver`. What watches one server call while telemetry is on (a span, metrics). Must
// not change: the rules every protocol relies on (docs/architecture.md).
import type { RpcError } from "../protocol/rpc-error.js";

/**
 * What watches one server call while telemetry is on (a span, metrics); `CallContext.observer`
 * holds it, and it is undefined when no OpenTelemetry SDK is registered, so a protocol's only
 * cost without one is the `undefined` check. `ServerCore.track` creates it and
 * `ServerCore.untrack(ctx, error)` ends it; `invokeHandler` runs the handler inside it.
 */
export interface CallObserver {
  /** Runs `fn(...args)` inside the call's trace context (the handler's own spans nest under the call's). */
  within<A extends unknown[]>(fn: (...args: A) => void, ...args: A): void;
  /** One request message (or a unary request body) of `bytes` arrived. */
  received(bytes: number): void;
  /** One response message (or a unary response body) of `bytes` was written. */
  sent(bytes: number): void;
  /** The call ended: `error` undefined for OK. Called once, by `ServerCore.untrack`. */
  end(error: RpcError | undefined): void;
}
