// Owns `ConnectStreamResponder`. Writes a Connect streaming response: always HTTP 200, headers on
// the first message (or with the end), enveloped messages, then the end-stream message (flag 0x02)
// … Must not change: the Connect protocol's wire rules, as connect-es speaks them.
import type { Compression } from "../protocol/compression.js";
import { H } from "../protocol/headers.js";
import type { RpcError } from "../protocol/rpc-error.js";
import { EnvelopeResponder } from "../protocol-grpc/stream-responder.js";
import type { CallContext } from "../runtime/context.js";
import type { Exchange, OutHeaders } from "../transport/server/exchange.js";
import type { ConnectDialect } from "../protocol/error-json.js";
import { CH, CONNECT_ACCEPT_ENCODING, endStreamFrame } from "./wire.js";

/**
 * Writes a Connect streaming response: always HTTP 200, headers on the first message (or with
 * the end), enveloped messages, then the end-stream message (flag 0x02) carrying the error, if
 * any, and the trailers as its `metadata`. Works on HTTP/1.1 (chunked) and HTTP/2 alike.
 */
export class ConnectStreamResponder extends EnvelopeResponder {
  constructor(
    ex: Exchange,
    ctx: CallContext,
    contentType: string,
    encoding: Compression | undefined,
    compressByDefault: boolean,
    private readonly dialect: ConnectDialect = "connect",
  ) {
    super(ex, ctx, contentType, encoding, compressByDefault);
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
