import type { Exchange } from "../transport/server/exchange.js";
import type { CallContext } from "./context.js";
import type { Limits } from "./limits.js";
import type { Router } from "./router.js";

/** What the protocol handlers need from the server. */
export interface ServerCore {
  readonly router: Router;
  readonly limits: Limits;
  /** Reject HTTP unary requests without `tri-protocol-version`. */
  readonly requireProtocolVersion: boolean;
  /** Registers an in-flight call for graceful shutdown. */
  track(ctx: CallContext, ex: Exchange): void;
  /** Ends the registration of a call (more calls for the same context do nothing). */
  untrack(ctx: CallContext): void;
  /** True once `close()` began: new calls are refused with `unavailable`. */
  readonly draining: boolean;
}
