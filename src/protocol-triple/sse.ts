import { encodeJsonValue } from "../codec/json-codec.js";
import { Code } from "../protocol/code.js";
import { clientCancelled, deadlineExceeded } from "../protocol/errors.js";
import { H } from "../protocol/headers.js";
import { RpcError } from "../protocol/rpc-error.js";
import type { CallContext } from "../runtime/context.js";
import { type HandlerOutcome, invokeHandler, iteratorOf, type PumpTarget, ResponsePump } from "../runtime/handler-result.js";
import type { RegisteredMethod } from "../runtime/router.js";
import type { ServerCore } from "../runtime/server-core.js";
import type { AbortSink, Exchange, OutHeaders } from "../transport/server/exchange.js";
import { errorBody } from "../protocol/error-json.js";
import { sendHttpError } from "./error-writer.js";

const SSE_HEADERS: Readonly<OutHeaders> = {
  [H.contentType]: "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
  // Proxies such as nginx would otherwise hold events back.
  "x-accel-buffering": "no",
};

/**
 * A server-streaming method served to a plain HTTP caller (HTTP/1.1, or HTTP/2 without a gRPC
 * content type) as Server-Sent Events: `200 text/event-stream`, one `data:` line per message
 * (JSON; ProtoJSON for .proto methods), and an error after the stream started as a final
 * `event: error` whose data is the usual JSON error body. Errors before the handler produced its
 * stream (interceptors, a rejected promise) are ordinary HTTP error responses. SSE is text, so
 * messages are always JSON whatever the request's content type.
 */
export class SseStream implements PumpTarget, AbortSink, HandlerOutcome {
  finished = false;
  private started = false;
  private timer: NodeJS.Timeout | undefined = undefined;
  private readonly pump: ResponsePump;
  /** Called once when the stream ends, however (the unary call's uploads are deleted then). */
  onEnd: (() => void) | undefined = undefined;

  constructor(
    private readonly ex: Exchange,
    private readonly route: RegisteredMethod,
    private readonly ctx: CallContext,
    private readonly core: ServerCore,
    timeoutMs: number | undefined,
  ) {
    this.pump = new ResponsePump(this, route, ctx);
    ex.onAbort(this);
    // The unary path's timer is cleared before it hands over; the deadline itself still holds.
    const remaining = ctx.timeRemaining();
    if (remaining !== undefined && timeoutMs !== undefined) {
      this.timer = setTimeout(() => this.finish(deadlineExceeded(timeoutMs)), remaining);
    }
  }

  /** Calls the handler with its bound arguments and streams what it returns. */
  start(args: unknown[]): void {
    invokeHandler(this.route, this.ctx, args, this);
  }

  handlerFailed(reason: unknown): void {
    this.finish(RpcError.from(reason));
  }

  handlerReturned(result: unknown): void {
    if (this.finished) return;
    const it = iteratorOf(result);
    if (!it) {
      const path = this.route.descriptor.path;
      this.finish(new RpcError(Code.Internal, `${path} is server-streaming and must return an AsyncIterable`));
      return;
    }
    this.started = true;
    const headers: OutHeaders = { ...SSE_HEADERS };
    this.ctx.copyResponseHeadersTo(headers);
    this.ex.start(200, headers, false);
    this.pump.start(it);
  }

  sendMessage(value: unknown): boolean {
    const event = `data: ${encodeJsonValue(this.route.descriptor, value)}\n\n`;
    this.ctx.observer?.sent(Buffer.byteLength(event));
    return this.ex.write(event);
  }

  onDrain(fn: () => void): void {
    this.ex.onDrain(fn);
  }

  streamDone(err: unknown): void {
    this.finish(err === undefined ? undefined : RpcError.from(err));
  }

  private finish(err: RpcError | undefined): void {
    if (this.finished) return;
    this.finished = true;
    if (this.timer) clearTimeout(this.timer);
    this.core.untrack(this.ctx, err);
    this.onEnd?.();
    if (!err) {
      this.pump.release();
      this.ex.end();
      return;
    }
    this.ctx.abort(err);
    this.pump.stop();
    if (!this.started) {
      sendHttpError(this.ex, err);
      return;
    }
    this.ex.write(`event: error\ndata: ${errorBody(err)}\n\n`);
    this.ex.end();
  }

  onExchangeAbort(): void {
    const err = clientCancelled();
    this.ctx.abort(err);
    if (this.finished) return;
    this.finished = true;
    if (this.timer) clearTimeout(this.timer);
    this.core.untrack(this.ctx, err);
    this.onEnd?.();
    this.pump.stop();
  }
}
