/**
 * The enveloped call on the server (gRPC, gRPC-Web, Connect streams, Triple over WebSocket):
 * length-prefixed messages in, a {@link StreamResponder} writing each protocol's frames and
 * ending. The lifecycle (tracking, abort, deadline, auth, one end) is `ServerCallLifecycle`'s.
 */
import { withNumberLimits } from "../codec/big-numbers.js";
import { Code } from "../protocol/code.js";
import type { Compression } from "../protocol/compression.js";
import { RpcError } from "../protocol/rpc-error.js";
import type { CallContext } from "../runtime/context.js";
import { iteratorOf, type PumpTarget, ResponsePump } from "../runtime/handler-result.js";
import type { RegisteredMethod } from "../runtime/router.js";
import type { ServerCore } from "../runtime/server-core.js";
import { ServerCallLifecycle } from "../runtime/server-call-lifecycle.js";
import { requestStreams, responseStreams } from "../service/descriptors.js";
import type { BodySink, Exchange } from "../transport/server/exchange.js";
import type { MessageCodec } from "../message/message-codec.js";
import { MessageQueue } from "../message/message-queue.js";
import { MessageReader, type MessageSink } from "../message/message-reader.js";
import type { StreamResponder } from "./stream-responder.js";

/**
 * One enveloped call on the server from first byte to its ending, for all four kinds: gRPC, and
 * gRPC-Web and Connect streams, whose messages are framed the same way (the
 * {@link StreamResponder} writes each protocol's ending). Unary and
 * server-streaming requests are read with plain callbacks and the handler is called directly (no
 * async generators on that path); request streams go through a {@link MessageQueue} with
 * backpressure; response streams go through a {@link ResponsePump}. The call is its reader's
 * {@link MessageSink} and its exchange's abort sink: a unary call allocates few objects, and
 * they all die with the call.
 */
export class EnvelopedServerCall extends ServerCallLifecycle implements MessageSink, PumpTarget {
  private readonly reader: MessageReader;
  private readonly queue: MessageQueue<unknown> | undefined;
  private readonly pump: ResponsePump | undefined;
  private readonly sink: BodySink;
  private message: Buffer | undefined = undefined;
  private messages = 0;

  constructor(
    core: ServerCore,
    ex: Exchange,
    route: RegisteredMethod,
    ctx: CallContext,
    private codec: MessageCodec,
    private readonly responder: StreamResponder,
    requestEncoding: Compression | undefined,
    timeoutMs: number | undefined,
    /** Wraps the message reader where the body needs decoding first (gRPC-Web's base64 text). */
    bodyFilter?: (reader: MessageReader) => BodySink,
  ) {
    super(core, ex, route, ctx);
    const kind = route.descriptor.kind;
    this.queue = requestStreams(kind) ? new MessageQueue((pause) => this.onPressure(pause)) : undefined;
    // A request stream may pause for as long as the call lives: no whole-request time or minimum rate.
    if (this.queue) ex.streamingBody?.();
    this.pump = responseStreams(kind) ? new ResponsePump(this, route, ctx) : undefined;
    const reader = (this.reader = new MessageReader(core.limits.maxMessageBytes, requestEncoding, this));
    this.sink = bodyFilter ? bodyFilter(reader) : reader;
    this.start(timeoutMs);
  }

  protected readRequest(): void {
    this.ex.readBody(this.sink);
    if (this.queue) this.invoke([this.queue]);
  }

  private onPressure(pause: boolean): void {
    if (this.reader.ended) return;
    if (pause) this.ex.body.pause();
    else this.ex.body.resume();
  }

  onMessage(p: Buffer): void {
    this.ctx.observer?.received(p.length);
    if (this.messages === 0 && this.codec.forRequest) this.codec = this.codec.forRequest(p);
    if (this.queue) {
      this.messages++;
      this.queue.push(this.decode(p)[0], p.length);
      return;
    }
    if (++this.messages > 1) {
      throw new RpcError(Code.Internal, `${this.route.descriptor.path} takes one request message, the client sent more`);
    }
    this.message = p;
  }

  /** One request message's arguments, numbers bounded by the server's `limits.maxNumberDigits`. */
  private decode(message: Buffer): unknown[] {
    return withNumberLimits(this.core.limits, () => this.codec.decodeRequest(message));
  }

  onMessagesEnd(err: RpcError | undefined): void {
    if (this.queue) {
      if (!err) {
        this.queue.end();
        return;
      }
      this.queue.abort(err);
      this.finish(err);
      return;
    }
    if (this.finished) return;
    if (err) {
      this.finish(err);
      return;
    }
    if (this.message === undefined) {
      this.finish(new RpcError(Code.Internal, `${this.route.descriptor.path} needs one request message, the client sent none`));
      return;
    }
    let args: unknown[];
    try {
      args = this.decode(this.message);
    } catch (e) {
      this.fail(e);
      return;
    }
    this.message = undefined;
    this.invoke(args);
  }

  handlerReturned(value: unknown): void {
    if (this.pump) this.stream(value);
    else this.reply(value);
  }

  /** One response message, framed (and compressed when the responder says so). */
  private encode(value: unknown): Buffer {
    try {
      return this.responder.frameOf(this.codec, value);
    } catch (e) {
      if (e instanceof RpcError) throw e;
      throw new RpcError(Code.Internal, `cannot encode the response: ${(e as Error).message}`, { cause: e });
    }
  }

  private reply(value: unknown): void {
    if (this.finished) return;
    let frame: Buffer;
    try {
      frame = this.encode(value);
    } catch (e) {
      this.fail(e);
      return;
    }
    this.ctx.observer?.sent(frame.length - 5);
    this.responder.reply(frame);
    this.finish(undefined);
  }

  private stream(result: unknown): void {
    const it = iteratorOf(result);
    if (!it) {
      const md = this.route.descriptor;
      const kind = md.kind.replace("_", "-");
      this.finish(new RpcError(Code.Internal, `${md.path} is ${kind} and must return an AsyncIterable (e.g. be an async generator)`));
      return;
    }
    this.pump!.start(it);
  }

  sendMessage(value: unknown): boolean {
    const frame = this.encode(value);
    this.ctx.observer?.sent(frame.length - 5);
    return this.responder.send(frame);
  }

  onDrain(fn: () => void): void {
    this.ex.onDrain(fn);
  }

  streamDone(err: unknown): void {
    if (err === undefined) this.finish(undefined);
    else this.fail(err);
  }

  /** The status (or OK trailers) through the responder. */
  protected writeEnd(err: RpcError | undefined): void {
    this.responder.finish(err);
  }

  /** Stops the handler's streams and abandons the rest of the request. */
  protected override release(err: RpcError | undefined): void {
    if (err) {
      this.queue?.abort(err);
      this.pump?.stop();
    } else {
      this.pump?.release();
    }
    if (this.reader.ended) return;
    this.reader.abandon();
    this.ex.body.resume();
    // After a trailers-only response, RST_STREAM(NO_ERROR) tells the client to stop sending.
    // After trailers that wait for their turn, the exchange resets the stream itself once they
    // are out (a reset now could overtake them). A peer that went away gets nothing.
    if (!this.responder.headersSent && !this.ex.aborted) this.ex.discardBody();
  }
}
