import { callerCancelled, clientSideTimeout } from "../protocol/errors.js";

/**
 * The lifetime of one call across all its attempts: one AbortSignal that fires with a
 * `deadline_exceeded` RpcError when the timeout expires, or a `cancelled` one when the caller's
 * signal aborts. Every attempt and stream listens to this one signal.
 */
export class CallScope {
  readonly signal: AbortSignal;
  /** Epoch ms at which the call times out, if it has a timeout. */
  readonly deadline: number | undefined;
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private readonly userSignal: AbortSignal | undefined;
  private readonly onUserAbort = () => {
    this.controller.abort(callerCancelled(this.userSignal?.reason));
  };

  constructor(timeoutMs: number | undefined, userSignal: AbortSignal | undefined) {
    this.signal = this.controller.signal;
    this.userSignal = userSignal;
    if (userSignal) {
      if (userSignal.aborted) this.onUserAbort();
      else userSignal.addEventListener("abort", this.onUserAbort, { once: true });
    }
    if (timeoutMs !== undefined && timeoutMs > 0 && !this.signal.aborted) {
      this.deadline = Date.now() + timeoutMs;
      this.timer = setTimeout(() => this.controller.abort(clientSideTimeout(timeoutMs)), timeoutMs);
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
    this.userSignal?.removeEventListener("abort", this.onUserAbort);
  }
}
