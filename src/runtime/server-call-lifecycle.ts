/**
 * The one lifecycle of a call on the server, for every protocol: tracked from start to end,
 * the exchange's abort and the deadline wired, authorized before any body byte is read, ended
 * exactly once (written, untracked, aborted on error, released). Protocols fill in only how
 * they read, answer and write an error; the order of the steps here must not change.
 */
import { clientCancelled, deadlineExceeded } from "../protocol/errors.js";
import { RpcError } from "../protocol/rpc-error.js";
import type { AbortSink, Exchange } from "../transport/server/exchange.js";
import type { CallContext } from "./context.js";
import { type HandlerOutcome, invokeHandler } from "./handler-result.js";
import type { RegisteredMethod } from "./router.js";
import type { ServerCore } from "./server-core.js";

/** The deadline timer's callback: one function for every call, the call passed as an argument. */
function deadlinePassed(call: ServerCallLifecycle, timeoutMs: number): void {
  call.fail(deadlineExceeded(timeoutMs));
}

/**
 * A server call. A protocol's call class extends it and calls {@link start} last in its
 * constructor; the lifecycle then calls back:
 *
 * - {@link readRequest} once the caller is authorized (never before, never after the end);
 * - {@link handlerReturned} / `handlerFailed` with the handler's outcome ({@link invoke});
 * - {@link writeEnd} exactly once, with the call's outcome (`undefined`: OK), before it is
 *   untracked: the protocol's error writer, or its success ending (trailers, an end of stream;
 *   nothing when the whole answer already went out);
 * - {@link release} exactly once, after the end however it came (ending, failure, deadline, the
 *   peer going away): what the call holds on the request side (readers, queues, temp files).
 *
 * The call is its exchange's {@link AbortSink}; a deadline fails it with `deadline_exceeded`;
 * any end with an error aborts the context, so the handler's `ctx.signal` fires.
 */
export abstract class ServerCallLifecycle implements AbortSink, HandlerOutcome {
  /** True once the call ended or was handed over: nothing more is read, invoked or written. */
  finished = false;
  private timer: NodeJS.Timeout | undefined = undefined;

  constructor(
    protected readonly core: ServerCore,
    protected readonly ex: Exchange,
    protected readonly route: RegisteredMethod,
    readonly ctx: CallContext,
  ) {}

  /** Starts a new call: tracked, the abort sink and the deadline set, then authorized, then read. */
  protected start(timeoutMs: number | undefined): void {
    this.core.track(this.ctx, this.ex);
    this.ex.onAbort(this);
    if (timeoutMs !== undefined) this.timer = setTimeout(deadlinePassed, timeoutMs, this, timeoutMs);
    // Authentication reads headers only: a caller without credentials never gets its body read.
    const authorize = this.route.authorize;
    if (authorize === undefined) this.readRequest();
    else
      authorize(this.ctx).then(
        () => this.finished || this.readRequest(),
        (e) => this.fail(e),
      );
  }

  /**
   * Continues a call another lifecycle object started and handed over ({@link handOver}): still
   * tracked and authorized; the abort sink and what is left of the deadline move here.
   */
  protected adopt(timeoutMs: number | undefined): void {
    this.ex.onAbort(this);
    const remaining = this.ctx.timeRemaining();
    if (remaining !== undefined && timeoutMs !== undefined) this.timer = setTimeout(deadlinePassed, remaining, this, timeoutMs);
  }

  /** Ends this object's part without ending the call: the one it hands the call to adopts it. */
  protected handOver(): void {
    this.finished = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
  }

  /** Reads the request, once the caller is authorized: the body, or arguments already at hand. */
  protected abstract readRequest(): void;

  /** Writes the call's end in the protocol's form: `err`, or the success ending (`undefined`). */
  protected abstract writeEnd(err: RpcError | undefined): void;

  /** Lets go of the request side once the call ended, however; `err` undefined for OK. */
  protected release(_err: RpcError | undefined): void {}

  /** Calls the handler with its bound arguments, unless the call already ended. */
  protected invoke(args: unknown[]): void {
    if (!this.finished) invokeHandler(this.route, this.ctx, args, this);
  }

  abstract handlerReturned(value: unknown): void;

  handlerFailed(reason: unknown): void {
    this.fail(reason);
  }

  /** Ends the call with whatever was thrown: RpcErrors as they are, anything else `unknown`. */
  fail(reason: unknown): void {
    if (!this.finished) this.finish(RpcError.from(reason));
  }

  /** Ends the call once: the timer stopped, the end written, untracked, aborted on error, released. */
  protected finish(err: RpcError | undefined): void {
    if (this.finished) return;
    this.finished = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.writeEnd(err);
    this.core.untrack(this.ctx, err);
    if (err !== undefined) this.ctx.abort(err);
    this.release(err);
  }

  /** The peer reset the stream or went away: nothing can be written; the call ends cancelled. */
  onExchangeAbort(): void {
    const err = clientCancelled();
    this.ctx.abort(err);
    if (this.finished) return;
    this.finished = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.core.untrack(this.ctx, err);
    this.release(err);
  }
}
