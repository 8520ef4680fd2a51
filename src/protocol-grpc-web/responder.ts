// Owns `GrpcWebResponder`. Writes a gRPC-Web response on HTTP/1.1 or HTTP/2: HTTP 200, messages
// framed as gRPC's, then a trailer frame (0x80) with the status. Must not change: gRPC-Web's wire
// rules (trailers as a flagged frame in the body) that grpc-web clients rely on.
import { type Compression, GRPC_ACCEPT_ENCODING } from "../protocol/compression.js";
import { H } from "../protocol/headers.js";
import type { RpcError } from "../protocol/rpc-error.js";
import { sendGrpcStatus } from "../protocol-grpc/error-writer.js";
import { EnvelopeResponder } from "../protocol-grpc/stream-responder.js";
import type { CallContext } from "../runtime/context.js";
import type { Exchange, OutHeaders } from "../transport/server/exchange.js";
import { trailerFrame } from "./wire.js";

/**
 * Writes a gRPC-Web response on HTTP/1.1 or HTTP/2: HTTP 200, messages framed as gRPC's, then a
 * trailer frame (0x80) with the status; a call that ends before any message answers
 * trailers-only (the status in the headers, no body). In text mode every write is base64 on its
 * own, padding included, which is how gRPC-Web clients read a text stream.
 */
export class GrpcWebResponder extends EnvelopeResponder {
  constructor(
    ex: Exchange,
    ctx: CallContext,
    contentType: string,
    encoding: Compression | undefined,
    compressByDefault: boolean,
    /** Base64 text mode (`application/grpc-web-text`). */
    private readonly text: boolean,
  ) {
    super(ex, ctx, contentType, encoding, compressByDefault);
  }

  private headers(): OutHeaders {
    const h: OutHeaders = { [H.contentType]: this.contentType, [H.grpcAcceptEncoding]: GRPC_ACCEPT_ENCODING };
    if (this.encoding) h[H.grpcEncoding] = this.encoding.name;
    this.ctx.copyResponseHeadersTo(h);
    return h;
  }

  private out(bytes: Buffer): Buffer | string {
    return this.text ? bytes.toString("base64") : bytes;
  }

  send(frame: Buffer): boolean {
    if (this.done) return true;
    if (!this.started) {
      this.started = true;
      this.ex.start(200, this.headers(), false);
    }
    return this.ex.write(this.out(frame));
  }

  reply(frame: Buffer): void {
    if (this.done) return;
    this.done = true;
    const body = Buffer.concat([frame, this.trailers(undefined)]);
    this.started = true;
    this.ex.respond(200, this.headers(), this.out(body));
  }

  finish(err: RpcError | undefined): void {
    if (this.done) return;
    this.done = true;
    if (!this.started) {
      this.started = true;
      let trailers: OutHeaders | undefined;
      if (this.ctx.hasResponseTrailers) this.ctx.copyResponseTrailersTo((trailers = {}));
      sendGrpcStatus(this.ex, err, this.headers(), trailers);
      return;
    }
    const last = this.out(this.trailers(err));
    this.ex.end(undefined, typeof last === "string" ? Buffer.from(last) : last);
  }

  private trailers(err: RpcError | undefined): Buffer {
    let t: Record<string, unknown> | undefined;
    if (this.ctx.hasResponseTrailers) this.ctx.copyResponseTrailersTo((t = {}));
    return trailerFrame(err, t);
  }
}
