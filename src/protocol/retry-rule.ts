// Owns `retryableCode`. True when another attempt may follow an error of this code (the caller has
// checked that no response message arrived and that the request provably did not reach a handler,
// or that the method is idempotent). Must not change: the code and status tables and error shapes
// every protocol shares.
import { Code } from "./code.js";

/**
 * The safe-retry table both clients apply (the Node client's cluster, the web client on its one
 * origin): which codes another attempt may follow, before any response message arrived.
 *
 * `unavailable` (a refused connection or stream, a request not written, a server shutting down)
 * and `unknown` (a handler failed with a plain error, which Dubbo retries). Everything else is
 * the handler's answer — invalid_argument, not_found, already_exists, permission_denied,
 * unauthenticated, failed_precondition, out_of_range, resource_exhausted, aborted,
 * unimplemented, internal — or the call's end (deadline_exceeded, cancelled), and sending it
 * again could repeat a side effect.
 */
const RETRYABLE_CODES: ReadonlySet<Code> = new Set([Code.Unavailable, Code.Unknown]);

/**
 * Codes another attempt may also follow for a side-effect-free method (`@Method({ idempotent:
 * true })`, `idempotency_level = NO_SIDE_EFFECTS`): an overloaded provider (`resource_exhausted`)
 * or a transaction conflict (`aborted`) may well answer on another try, as may a provider without
 * the method (`unimplemented`: a Dubbo Java provider stopping answers "Invoker for gRPC not found"
 * once it has unexported its services, before its registry node is gone; an older version in a
 * rolling upgrade), and repeating the call changes nothing.
 */
const IDEMPOTENT_RETRYABLE_CODES: ReadonlySet<Code> = new Set([Code.ResourceExhausted, Code.Aborted, Code.Unimplemented]);

/**
 * True when another attempt may follow an error of this code (the caller has checked that no
 * response message arrived and that the request provably did not reach a handler, or that the
 * method is idempotent).
 */
export function retryableCode(code: Code, idempotent: boolean): boolean {
  return RETRYABLE_CODES.has(code) || (idempotent && IDEMPOTENT_RETRYABLE_CODES.has(code));
}
