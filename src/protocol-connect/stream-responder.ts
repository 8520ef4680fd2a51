import type { Compression } from "../protocol/compression.js";
import { H } from "../protocol/headers.js";
import type { RpcError } from "../protocol/rpc-error.js";
import type { MessageCodec } from "../protocol-grpc/codec-types.js";
import { frameMessage, type StreamResponder } from "../protocol-grpc/stream-responder.js";
import type { CallContext } from "../server/context.js";
import type { Exchange, OutHeaders } from "../transport/server/exchange.js";
import { CH, CONNECT_ACCEPT_ENCODING, type ConnectDialect, endStreamFrame } from "./wire.js";

/**
 * Writes a Connect streaming response: always HTTP 200, headers on the first message (or with
 * the end), enveloped messages, then the end-stream message (flag 0x02) carrying the error, if
 * any, and the trailers as its `metadata`. Works on HTTP/1.1 (chunked) and HTTP/2 alike.
 */
export class ConnectStreamResponder implements StreamResponder {
  private started = false;
  private done = false;

  constructor(
    private readonly ex: Exchange,
    private readonly ctx: CallContext,
    private readonly contentType: string,
    private readonly encoding: Compression | undefined,
    private readonly compressByDefault: boolean,
    private readonly dialect: ConnectDialect = "connect",
  ) {}

  get headersSent(): boolean {
    return this.started;
  }

  private begin(): void {
    this.started = true;
    const h: OutHeaders = { [H.contentType]: this.contentType, [CH.acceptEncoding]: CONNECT_ACCEPT_ENCODING };
    if (this.encoding) h[CH.contentEncoding] = this.encoding.name;
    this.ctx.copyResponseHeadersTo(h);
    this.ex.start(200, h, false);
  }

  send(frame: Buffer): boolean {
    if (this.done) return true;
    if (!this.started) this.begin();
    return this.ex.write(frame);
  }

  reply(frame: Buffer): void {
    if (this.done) return;
    this.done = true;
    if (!this.started) this.begin();
    this.ex.end(undefined, Buffer.concat([frame, this.endFrame(undefined)]));
  }

  frameOf(codec: MessageCodec, value: unknown): Buffer {
    return frameMessage(codec, value, this.ctx, this.encoding, this.compressByDefault);
  }

  finish(err: RpcError | undefined): void {
    if (this.done) return;
    this.done = true;
    if (!this.started) this.begin();
    this.ex.end(undefined, this.endFrame(err));
  }

  private endFrame(err: RpcError | undefined): Buffer {
    let trailers: Record<string, unknown> | undefined;
    if (this.ctx.hasResponseTrailers) this.ctx.copyResponseTrailersTo((trailers = {}));
    return endStreamFrame(err, trailers, this.dialect);
  }
}
