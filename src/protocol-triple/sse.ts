/**
 * Server-streaming methods for plain HTTP callers as Server-Sent Events. It continues the call
 * Triple's unary call started (`adopt`): the lifecycle (abort, deadline, one end, untrack) is
 * `ServerCallLifecycle`'s; this file keeps SSE's wire rules.
 */
import { encodeJsonValue } from "../codec/json-codec.js";
import { Code } from "../protocol/code.js";
import { errorBody } from "../protocol/error-json.js";
import { H } from "../protocol/headers.js";
import { RpcError } from "../protocol/rpc-error.js";
import type { CallContext } from "../runtime/context.js";
import { iteratorOf, type PumpTarget, ResponsePump } from "../runtime/handler-result.js";
import type { RegisteredMethod } from "../runtime/router.js";
import type { ServerCore } from "../runtime/server-core.js";
import { ServerCallLifecycle } from "../runtime/server-call-lifecycle.js";
import type { Exchange, OutHeaders } from "../transport/server/exchange.js";
import { sendTripleError } from "./error-writer.js";

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
export class SseStream extends ServerCallLifecycle implements PumpTarget {
  private started = false;
  private readonly pump: ResponsePump;
  /** Called once when the stream ends, however (the unary call's uploads are deleted then). */
  onEnd: (() => void) | undefined = undefined;

  constructor(core: ServerCore, ex: Exchange, route: RegisteredMethod, ctx: CallContext, timeoutMs: number | undefined) {
    super(core, ex, route, ctx);
    this.pump = new ResponsePump(this, route, ctx);
    // The unary call's timer is cleared before it hands over; the deadline itself still holds.
    this.adopt(timeoutMs);
  }

  /** The arguments were bound by the unary call that handed this one over: see {@link run}. */
  protected readRequest(): void {}

  /** Calls the handler with its bound arguments and streams what it returns. */
  run(args: unknown[]): void {
    this.invoke(args);
  }

  handlerReturned(result: unknown): void {
    if (this.finished) return;
    const it = iteratorOf(result);
    if (!it) {
      const path = this.route.descriptor.path;
      this.fail(new RpcError(Code.Internal, `${path} is server-streaming and must return an AsyncIterable`));
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
    if (err === undefined) this.finish(undefined);
    else this.fail(err);
  }

  /** The end of the stream; an error before it started as an HTTP error, after as `event: error`. */
  protected writeEnd(err: RpcError | undefined): void {
    if (!err) {
      this.ex.end();
      return;
    }
    if (!this.started) {
      sendTripleError(this.ex, err);
      return;
    }
    this.ex.write(`event: error\ndata: ${errorBody(err)}\n\n`);
    this.ex.end();
  }

  protected override release(err: RpcError | undefined): void {
    this.onEnd?.();
    if (err) this.pump.stop();
    else this.pump.release();
  }
}
