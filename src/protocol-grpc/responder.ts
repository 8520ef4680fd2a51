// Owns `GrpcResponder`. Writes one gRPC response: headers on the first message, length-prefixed
// messages, then trailers with the status — or a trailers-only response when the call ends before
// any message. Must not change: gRPC's wire rules (5-byte message prefix, grpc-status in trailers)
// that grpc-js and other peers rely on.
import { GRPC_ACCEPT_ENCODING } from "../protocol/compression.js";
import { H } from "../protocol/headers.js";
import type { RpcError } from "../protocol/rpc-error.js";
import type { OutHeaders } from "../transport/server/exchange.js";
import { sendGrpcStatus } from "./error-writer.js";
import { EnvelopeResponder } from "./stream-responder.js";

export { responseCompression } from "./stream-responder.js";

/** The trailers of a successful call that set none of its own (never mutated). */
const OK_TRAILERS: OutHeaders = Object.freeze({ [H.grpcStatus]: "0" }) as OutHeaders;

/**
 * Writes one gRPC response: headers on the first message, length-prefixed messages, then
 * trailers with the status — or a trailers-only response when the call ends before any message.
 */
export class GrpcResponder extends EnvelopeResponder {
  private headers(): OutHeaders {
    const h: OutHeaders = { [H.contentType]: this.contentType, [H.grpcAcceptEncoding]: GRPC_ACCEPT_ENCODING };
    if (this.encoding) h[H.grpcEncoding] = this.encoding.name;
    this.ctx.copyResponseHeadersTo(h);
    return h;
  }

  /** Sends one framed message (from {@link frameOf}); false means wait for the exchange's drain. */
  send(frame: Buffer): boolean {
    if (this.done) return true;
    if (!this.started) {
      this.started = true;
      this.ex.start(200, this.headers(), true);
    }
    return this.ex.write(frame);
  }

  /**
   * A unary reply: headers, the one framed message and OK trailers handed to the transport
   * together, so they leave in one flush.
   */
  reply(frame: Buffer): void {
    if (this.done) return;
    this.done = true;
    this.started = true;
    this.ex.start(200, this.headers(), true);
    let t = OK_TRAILERS;
    if (this.ctx.hasResponseTrailers) {
      t = { [H.grpcStatus]: "0" };
      this.ctx.copyResponseTrailersTo(t);
    }
    this.ex.end(t, frame);
  }

  /** Ends the call with OK (`err` undefined) or an error status. Later calls do nothing. */
  finish(err: RpcError | undefined): void {
    if (this.done) return;
    this.done = true;
    let trailers: OutHeaders | undefined;
    if (this.ctx.hasResponseTrailers) this.ctx.copyResponseTrailersTo((trailers = {}));
    // Trailers-only (one HEADERS frame with the status) when no message went out, else trailers.
    sendGrpcStatus(this.ex, err, this.started ? {} : this.headers(), trailers);
  }
}
