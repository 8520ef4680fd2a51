import * as http2 from "node:http2";
import type { OutgoingHttpHeaders } from "node:http";
import { Code } from "../protocol/code.js";
import type { Compression } from "../protocol/compression.js";
import { GRPC_COMPRESSIONS } from "../protocol/compression.js";
import { encodeFrame, FLAG_COMPRESSED, FrameDecoder } from "../protocol/grpc-framing.js";
import { RpcError } from "../protocol/rpc-error.js";
import {
  codeFromGrpcHttpStatus,
  errorFromGrpcTrailers,
  type IncomingHeaders,
  metadataOf,
  transportError,
} from "./errors.js";
import type { MessageCodec } from "./message-codec.js";
import { MessageQueue } from "./message-queue.js";
import type { CallOptions } from "./options.js";
import type { Provider } from "./provider.js";
import { streamClosedError } from "./transport-http2.js";

/** Pause reading a response stream while this many messages wait for the caller. */
const HIGH_WATER = 32;

/** Settings of one gRPC call. */
export interface GrpcCallSettings {
  readonly codec: MessageCodec;
  readonly maxBytes: number;
  /** Compression of request messages, if any. */
  readonly compression: Compression | undefined;
  readonly signal: AbortSignal;
  readonly options: CallOptions | undefined;
}

/**
 * One gRPC call on an open HTTP/2 stream (spec §4.2): length-prefixed request messages out,
 * response messages into a {@link MessageQueue}, the outcome from `grpc-status` in the trailers
 * (or a trailers-only response).
 */
export class GrpcCall {
  /** The response messages, ending when the trailers say OK and failing otherwise. */
  readonly responses: MessageQueue<unknown>;
  private readonly decoder: FrameDecoder;
  private headers: IncomingHeaders | undefined;
  private trailers: IncomingHeaders | undefined;
  private responseEncoding: Compression | undefined | null = undefined;

  constructor(
    private readonly stream: http2.ClientHttp2Stream,
    private readonly provider: Provider,
    private readonly settings: GrpcCallSettings,
  ) {
    this.decoder = new FrameDecoder(settings.maxBytes);
    this.responses = new MessageQueue<unknown>(
      (n) => {
        if (n >= HIGH_WATER) stream.pause();
        else if (n === 0 && stream.isPaused()) stream.resume();
      },
      () => this.cancel(),
    );
    stream.on("response", (h) => this.onHeaders(h));
    stream.on("trailers", (t) => {
      this.trailers = t;
    });
    stream.on("data", (chunk: Buffer) => this.onData(chunk));
    stream.on("error", (e) => this.fail(settings.signal.aborted ? settings.signal.reason : transportError(provider.address, e)));
    stream.on("close", () => this.onClose());
  }

  private fail(err: unknown): void {
    if (this.responses.closed) return;
    this.responses.fail(err);
    if (!this.stream.destroyed) this.stream.close(http2.constants.NGHTTP2_CANCEL);
  }

  private onHeaders(h: http2.IncomingHttpHeaders): void {
    this.headers = h;
    const status = Number(h[":status"]);
    if (h["grpc-status"] !== undefined) {
      this.trailers = h; // trailers-only: the outcome is in these headers
      return;
    }
    if (status !== 200) {
      this.fail(new RpcError(codeFromGrpcHttpStatus(status), `HTTP status ${status} from ${this.provider.address}`, {
        metadata: metadataOf(h),
        httpStatus: status,
      }));
      return;
    }
    const ct = String(h["content-type"] ?? "");
    if (!ct.startsWith("application/grpc") && !ct.startsWith("application/triple")) {
      this.fail(new RpcError(Code.Unknown, `invalid content-type "${ct}" in a gRPC response`, { metadata: metadataOf(h) }));
      return;
    }
    const enc = h["grpc-encoding"];
    if (enc !== undefined && enc !== "identity") {
      const c = GRPC_COMPRESSIONS.get(String(enc));
      if (!c) {
        this.fail(new RpcError(Code.Internal, `the response uses unsupported grpc-encoding "${enc}"`));
        return;
      }
      this.responseEncoding = c;
    } else {
      this.responseEncoding = null;
    }
    this.settings.options?.onHeaders?.(metadataOf(h) as Record<string, string | string[]>);
  }

  private onData(chunk: Buffer): void {
    if (this.responses.closed) return;
    try {
      this.decoder.push(chunk, this);
    } catch (e) {
      this.fail(RpcError.from(e, Code.Internal));
    }
  }

  /** One response frame (from the decoder). */
  frame(flags: number, payload: Buffer): void {
    let data: Uint8Array = payload;
    if (flags & FLAG_COMPRESSED) {
      if (!this.responseEncoding) throw new RpcError(Code.Internal, "compressed message without grpc-encoding");
      data = this.responseEncoding.decompress(data, this.settings.maxBytes);
    }
    this.responses.push(this.settings.codec.decode(data));
  }

  private onClose(): void {
    if (this.responses.closed) return;
    const t = this.trailers;
    let err: unknown;
    if (this.settings.signal.aborted) err = this.settings.signal.reason;
    else if (!t) err = streamClosedError(this.provider, this.stream.rstCode);
    else {
      if (t !== this.headers) this.settings.options?.onTrailers?.(metadataOf(t) as Record<string, string | string[]>);
      err = errorFromGrpcTrailers(t);
      if (!err && this.decoder.pending) err = new RpcError(Code.Internal, "the response ended in the middle of a message");
    }
    if (err) this.fail(err);
    else this.responses.end();
  }

  /**
   * Sends one request message; resolves when the stream can take more. Resolves false when the
   * call is already over (its outcome arrives through `responses`).
   */
  send(value: unknown): Promise<boolean> {
    if (this.stream.destroyed || this.stream.closed || this.responses.closed) return Promise.resolve(false);
    let payload = this.settings.codec.encodeMessage(value);
    const c = this.settings.compression;
    const compress = c !== undefined && payload.byteLength >= 1024;
    if (compress) payload = c.compress(payload);
    return this.write(encodeFrame(payload, compress));
  }

  /** Sends the arguments of a unary or server-streaming call as the one request message, and ends the request. */
  sendArgs(payload: Uint8Array): void {
    const c = this.settings.compression;
    const compress = c !== undefined && payload.byteLength >= 1024;
    this.stream.end(encodeFrame(compress ? c.compress(payload) : payload, compress));
  }

  private write(frame: Buffer): Promise<boolean> {
    if (this.stream.write(frame)) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        this.stream.off("drain", onDrain);
        this.stream.off("close", onClose);
        resolve(ok);
      };
      const onDrain = () => done(true);
      const onClose = () => done(false);
      this.stream.on("drain", onDrain);
      this.stream.on("close", onClose);
    });
  }

  /** Half-closes the request side. */
  end(): void {
    if (!this.stream.destroyed && !this.stream.writableEnded) this.stream.end();
  }

  /** Cancels the call (RST_STREAM CANCEL); the responses fail with `cancelled`. */
  cancel(reason?: unknown): void {
    if (!this.responses.closed) {
      this.responses.fail(reason ?? new RpcError(Code.Cancelled, "the call was cancelled by the client"));
    }
    if (!this.stream.destroyed) this.stream.close(http2.constants.NGHTTP2_CANCEL);
  }
}

/** The request headers of a gRPC call. */
export function grpcHeaders(path: string, base: OutgoingHttpHeaders): OutgoingHttpHeaders {
  return { ...base, ":method": "POST", ":path": path, te: "trailers" };
}
