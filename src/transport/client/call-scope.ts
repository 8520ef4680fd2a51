// Owns `NEVER_ABORTS`, `CallScope`. The signal of calls that nothing can end early (no timeout, no
// caller's signal): shared, never aborted, and never listened to (transports skip their abort
// listeners for it). Must not change: every bound on what a peer can make us hold
// (docs/security.md).
import { callerCancelled, clientSideTimeout } from "../../protocol/errors.js";

/**
 * The signal of calls that nothing can end early (no timeout, no caller's signal): shared, never
 * aborted, and never listened to (transports skip their abort listeners for it).
 */
export const NEVER_ABORTS: AbortSignal = new AbortController().signal;

/**
 * The lifetime of one call across all its attempts: one AbortSignal that fires with a
 * `deadline_exceeded` RpcError when the timeout expires, or a `cancelled` one when the caller's
 * signal aborts. Every attempt and stream listens to this one signal.
 */
export class CallScope {
  readonly signal: AbortSignal;
  /** Epoch ms at which the call times out, if it has a timeout. */
  readonly deadline: number | undefined = undefined;
  private timer: NodeJS.Timeout | undefined = undefined;
  private readonly userSignal: AbortSignal | undefined = undefined;
  private readonly onUserAbort: (() => void) | undefined = undefined;

  constructor(timeoutMs: number | undefined, userSignal: AbortSignal | undefined) {
    const timed = timeoutMs !== undefined && timeoutMs > 0;
    if (!timed && !userSignal) {
      // Nothing can end this call early: share the signal that never aborts (no allocation).
      this.signal = NEVER_ABORTS;
      return;
    }
    const controller = new AbortController();
    this.signal = controller.signal;
    this.userSignal = userSignal;
    this.onUserAbort = () => controller.abort(callerCancelled(userSignal?.reason));
    if (userSignal) {
      if (userSignal.aborted) this.onUserAbort();
      else userSignal.addEventListener("abort", this.onUserAbort, { once: true });
    }
    if (timed && !this.signal.aborted) {
      this.deadline = Date.now() + timeoutMs;
      this.timer = setTimeout(() => controller.abort(clientSideTimeout(timeoutMs)), timeoutMs);
    }
  }

  /** Milliseconds left before the deadline (at least 1), or undefined without a timeout. */
  remaining(): number | undefined {
    return this.deadline === undefined ? undefined : Math.max(1, this.deadline - Date.now());
  }

  /** Throws the abort reason if the call is already over. */
  throwIfAborted(): void {
    if (this.signal.aborted) throw this.signal.reason;
  }

  /** Releases the timer and the listener on the caller's signal. */
  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.onUserAbort) this.userSignal?.removeEventListener("abort", this.onUserAbort);
  }
}
