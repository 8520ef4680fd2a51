import { Code } from "../protocol/code.js";
import type { Compression } from "../protocol/compression.js";
import { RpcError } from "../protocol/rpc-error.js";
import { requestStreams, responseStreams } from "../service/descriptors.js";
import type { AbortSink, Exchange } from "../transport/exchange.js";
import type { CallContext } from "./context.js";
import type { ServerCore } from "./core.js";
import type { GrpcMessageCodec } from "./grpc-codec.js";
import { MessageQueue } from "./grpc-message-queue.js";
import { GrpcReader, type MessageSink } from "./grpc-reader.js";
import type { GrpcResponder } from "./grpc-response.js";
import type { RegisteredMethod } from "./router.js";

function isThenable(x: unknown): x is PromiseLike<unknown> {
  return x !== null && typeof x === "object" && typeof (x as PromiseLike<unknown>).then === "function";
}

function iteratorOf(x: unknown): AsyncIterator<unknown> | Iterator<unknown> | undefined {
  if (x === null || (typeof x !== "object" && typeof x !== "function")) return undefined;
  const o = x as Partial<AsyncIterable<unknown> & Iterable<unknown>>;
  if (typeof o[Symbol.asyncIterator] === "function") return o[Symbol.asyncIterator]!();
  if (typeof o[Symbol.iterator] === "function") return o[Symbol.iterator]!();
  return undefined;
}

/**
 * One gRPC call from first byte to trailers, for all four kinds. Unary and server-streaming
 * requests are read with plain callbacks and the handler is called directly (no async
 * generators on that path); request streams go through a {@link MessageQueue} with
 * backpressure; response streams are pumped with `await` on `'drain'` when the peer is slow.
 * The call is its reader's {@link MessageSink}: a unary call allocates few objects, and they all
 * die with the call.
 */
export class GrpcCall implements MessageSink, AbortSink {
  private readonly reader: GrpcReader;
  private readonly queue: MessageQueue<unknown> | undefined;
  private iterator: AsyncIterator<unknown> | Iterator<unknown> | undefined = undefined;
  private timer: NodeJS.Timeout | undefined = undefined;
  private finished = false;
  private drainWaiter: (() => void) | undefined = undefined;
  private message: Buffer | undefined = undefined;
  private messages = 0;

  constructor(
    private readonly core: ServerCore,
    private readonly ex: Exchange,
    private readonly route: RegisteredMethod,
    private readonly ctx: CallContext,
    private readonly codec: GrpcMessageCodec,
    private readonly responder: GrpcResponder,
    requestEncoding: Compression | undefined,
    private readonly timeoutMs: number | undefined,
  ) {
    core.track(ctx, ex);
    ex.onAbort(this);
    if (timeoutMs !== undefined) this.timer = setTimeout(() => this.onDeadline(), timeoutMs);
    this.queue = requestStreams(route.descriptor.kind)
      ? new MessageQueue((pause) => (pause ? this.reader.pause() : this.reader.resume()))
      : undefined;
    this.reader = new GrpcReader(ex, core.limits.maxMessageBytes, requestEncoding, this);
    if (this.queue) this.invoke([this.queue]);
  }

  onMessage(p: Buffer): void {
    if (this.queue) {
      this.queue.push(this.codec.decode(p)[0], p.length);
      return;
    }
    if (++this.messages > 1) {
      throw new RpcError(Code.Internal, `${this.route.descriptor.path} takes one request message, the client sent more`);
    }
    this.message = p;
  }

  onMessagesEnd(err: RpcError | undefined): void {
    if (this.queue) {
      this.onStreamEnd(err);
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
      args = this.codec.decode(this.message);
    } catch (e) {
      this.fail(e);
      return;
    }
    this.message = undefined;
    this.invoke(args);
  }

  private onStreamEnd(err: RpcError | undefined): void {
    if (err) {
      this.queue!.fail(err);
      this.finish(err);
    } else {
      this.queue!.end();
    }
  }

  private invoke(input: unknown[]): void {
    if (this.finished) return;
    let result: unknown;
    try {
      result = this.route.invoke(this.ctx, input);
    } catch (e) {
      this.fail(e);
      return;
    }
    if (responseStreams(this.route.descriptor.kind)) {
      if (isThenable(result)) result.then((r) => this.stream(r), (e) => this.fail(e));
      else this.stream(result);
    } else if (isThenable(result)) {
      result.then((v) => this.reply(v), (e) => this.fail(e));
    } else {
      this.reply(result);
    }
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
    this.responder.reply(frame);
    this.finish(undefined);
  }

  private stream(result: unknown): void {
    const it = iteratorOf(result);
    if (!it) {
      this.finish(
        new RpcError(
          Code.Internal,
          `${this.route.descriptor.path} is ${this.route.descriptor.kind.replace("_", "-")} and must return an AsyncIterable (e.g. be an async generator)`,
        ),
      );
      return;
    }
    this.iterator = it;
    if (this.finished) {
      this.stopIterator();
      return;
    }
    void this.pump(it);
  }

  private async pump(it: AsyncIterator<unknown> | Iterator<unknown>): Promise<void> {
    try {
      for (;;) {
        const r = await it.next();
        if (this.finished) return;
        if (r.done) break;
        if (!this.responder.send(this.encode(r.value))) {
          await new Promise<void>((resolve) => {
            this.drainWaiter = resolve;
            this.ex.onDrain(resolve);
          });
          this.drainWaiter = undefined;
          if (this.finished) return;
        }
      }
      this.iterator = undefined;
      this.finish(undefined);
    } catch (e) {
      this.iterator = undefined;
      this.fail(e);
    }
  }

  private stopIterator(): void {
    const it = this.iterator;
    this.iterator = undefined;
    if (it && typeof it.return === "function") {
      // A handler stuck in an await only sees this when it resumes; its signal already fired.
      Promise.resolve()
        .then(() => it.return!())
        .catch(() => {});
    }
  }

  /** Ends the call with whatever was thrown: RpcErrors as they are, anything else `unknown`. */
  private fail(reason: unknown): void {
    this.finish(RpcError.from(reason));
  }

  /** Ends the call: status to the client, request side abandoned, handler stopped. */
  private finish(err: RpcError | undefined): void {
    if (this.finished) return;
    this.finished = true;
    if (this.timer) clearTimeout(this.timer);
    this.responder.finish(err);
    this.core.untrack(this.ctx);
    if (err) {
      this.ctx.abort(err);
      this.queue?.fail(err);
      this.stopIterator();
    }
    this.drainWaiter?.();
    if (!this.reader.ended) {
      this.reader.abandon();
      // After a trailers-only response, RST_STREAM(NO_ERROR) tells the client to stop sending.
      // After trailers that wait for their turn, a reset could overtake them: drain instead.
      if (!this.responder.headersSent) this.ex.discardBody();
    }
  }

  /** The client reset the stream or went away. */
  onExchangeAbort(): void {
    const err = new RpcError(Code.Cancelled, "the client cancelled the call");
    this.ctx.abort(err);
    if (this.finished) return;
    this.finished = true;
    if (this.timer) clearTimeout(this.timer);
    this.core.untrack(this.ctx);
    this.queue?.fail(err);
    this.reader.abandon();
    this.stopIterator();
    this.drainWaiter?.();
  }

  private onDeadline(): void {
    const err = new RpcError(
      Code.DeadlineExceeded,
      `the call exceeded its deadline of ${this.timeoutMs} ms`,
      { legacyStatus: 31 },
    );
    this.ctx.abort(err);
    this.finish(err);
  }
}
