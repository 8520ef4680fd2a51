// Owns `ServerCore`. What the protocol handlers need from the server. Must not change: the rules
// every protocol relies on (docs/architecture.md).
import type { UploadStore } from "../codec/upload-store.js";
import type { RpcError } from "../protocol/rpc-error.js";
import type { Exchange } from "../transport/server/exchange.js";
import type { CallContext, WireProtocol } from "./context.js";
import type { Limits } from "./limits.js";
import type { RestRouter } from "./rest-router.js";
import type { Router } from "./router.js";

/** What the protocol handlers need from the server. */
export interface ServerCore {
  readonly router: Router;
  /** The REST routes (`@Get("/users/{id}")` …); undefined while no method has one. */
  readonly rest: RestRouter | undefined;
  readonly limits: Limits;
  /** Reject HTTP unary requests without `tri-protocol-version`. */
  readonly requireProtocolVersion: boolean;
  /** Answer callers that look like dubbo-js with the gRPC code as the error body's `status` (`dubboJsErrors`). */
  readonly dubboJsErrors: boolean;
  /**
   * Registers an in-flight call for graceful shutdown, and starts its telemetry (server span,
   * metrics) when an OpenTelemetry SDK is registered: `ctx.observer`. Every protocol calls it once
   * per call, before the handler runs, while `ex.headers` still holds the request headers.
   */
  track(ctx: CallContext, ex: Exchange): void;
  /**
   * Ends a call: its registration and its telemetry, with its final status (`error` undefined for
   * OK). Every protocol calls it once when the call is over, whatever ended it; later calls for the
   * same context do nothing.
   */
  untrack(ctx: CallContext, error: RpcError | undefined): void;
  /**
   * A call refused before it reached a handler (unknown method, bad headers): reported to
   * telemetry as a span of its own when an SDK is registered; nothing otherwise.
   */
  refused(ex: Exchange, protocol: WireProtocol, err: unknown): void;
  /** Where streamed uploads (`StreamedFile`) past the memory threshold are spilled; none: they are refused. */
  readonly uploads?: UploadStore;
  /** True once `close()` began: new calls are refused with `unavailable`. */
  readonly draining: boolean;
}
