// Owns `responseCompression`, `frameMessage`, `EnvelopeResponder`. Per-message response
// compression, set by a handler on its context before returning or yielding: `true` compresses the
// next messages with the negotiated encoding (the … Must not change: gRPC's wire rules (5-byte
// message prefix, grpc-status in trailers) that grpc-js and other peers rely on.
import { COMPRESS_MIN_BYTES, type Compression } from "../protocol/compression.js";
import type { RpcError } from "../protocol/rpc-error.js";
import type { Exchange } from "../transport/server/exchange.js";
import { type CallContext, createContextKey } from "../runtime/context.js";
import type { MessageCodec } from "../message/codec-types.js";
import { encodeFrame } from "../message/framing.js";

/**
 * Writes the response side of an enveloped call. gRPC, gRPC-Web and Connect streams frame their
 * messages alike (a flag byte, a 4-byte length, the message) and differ in how the call ends:
 * HTTP/2 trailers (gRPC), a trailer frame flagged 0x80 (gRPC-Web), an end-stream frame flagged
 * 0x02 holding JSON (Connect). A {@link EnvelopedServerCall} drives any of them.
 */
export interface StreamResponder {
  /** True once response headers went out. */
  readonly headersSent: boolean;
  /** Sends one framed message (from {@link frameOf}); false means wait for the exchange's drain. */
  send(frame: Buffer): boolean;
  /** A unary reply: headers, the one framed message and the success ending in one flush. */
  reply(frame: Buffer): void;
  /** Encodes and frames one response message, compressed when negotiated and wanted. */
  frameOf(codec: MessageCodec, value: unknown): Buffer;
  /** Ends the call with OK (`err` undefined) or an error. Later calls do nothing. */
  finish(err: RpcError | undefined): void;
}

/**
 * Per-message response compression, set by a handler on its context before returning or
 * yielding: `true` compresses the next messages with the negotiated encoding (the request's
 * encoding, else the best one the client accepts), `false` sends them uncompressed. Unset:
 * messages of at least 1 KiB are compressed when the request was.
 *
 * ```ts
 * ctx.set(responseCompression, true);
 * ```
 */
export const responseCompression = createContextKey<boolean | undefined>(undefined, "gRPC response compression");

/**
 * One response message as a frame: compressed with `encoding` when the handler asked for it, or
 * by default (`compressByDefault`) when it is at least 1 KiB; otherwise plain.
 */
function frameMessage(codec: MessageCodec, value: unknown, ctx: CallContext, encoding: Compression | undefined, compressByDefault: boolean): Buffer {
  if (encoding) {
    const want = ctx.get(responseCompression);
    if (want === true || (want === undefined && compressByDefault)) {
      const payload = codec.encodeResponse(value);
      if (want === true || payload.length >= COMPRESS_MIN_BYTES) return encodeFrame(encoding.compress(payload), true);
      return encodeFrame(payload);
    }
  }
  return codec.encodeResponseFrame ? codec.encodeResponseFrame(value) : encodeFrame(codec.encodeResponse(value));
}

/**
 * What the three responders share: the exchange and call they answer, the response's content
 * type and message encoding, whether headers went out and whether the call ended.
 */
export abstract class EnvelopeResponder implements StreamResponder {
  protected started = false;
  protected done = false;

  constructor(
    protected readonly ex: Exchange,
    protected readonly ctx: CallContext,
    protected readonly contentType: string,
    /** The encoding compressed messages use; undefined: the client accepts none of ours. */
    protected readonly encoding: Compression | undefined,
    /** Compress messages of 1 KiB and more unless the handler says otherwise. */
    protected readonly compressByDefault: boolean,
  ) {}

  /** True once headers went out. */
  get headersSent(): boolean {
    return this.started;
  }

  frameOf(codec: MessageCodec, value: unknown): Buffer {
    return frameMessage(codec, value, this.ctx, this.encoding, this.compressByDefault);
  }

  abstract send(frame: Buffer): boolean;
  abstract reply(frame: Buffer): void;
  abstract finish(err: RpcError | undefined): void;
}
