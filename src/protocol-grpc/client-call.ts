// Owns `GRPC_DIALECT`, `GrpcClientCall`, `grpcHeaders`. gRPC's dialect: the outcome in HTTP/2
// trailers (`grpc-status`), messages compressed per `grpc-encoding`. Must not change: gRPC's wire
// rules (5-byte message prefix, grpc-status in trailers) that grpc-js and other peers rely on.
import type { OutgoingHttpHeaders } from "node:http";
import * as http2 from "node:http2";
import { streamClosedError, streamError } from "../transport/client/errors.js";
import type { CallOptions } from "../runtime/call-options.js";
import type { Provider } from "../transport/client/provider.js";
import { Code } from "../protocol/code.js";
import { COMPRESS_MIN_BYTES, type Compression, GRPC_COMPRESSIONS } from "../protocol/compression.js";
import { callerCancelled } from "../protocol/errors.js";
import { H, type HeaderMap, metadataOf, trailersOf } from "../protocol/headers.js";
import { RpcError } from "../protocol/rpc-error.js";
import { codeFromGrpcHttpStatus } from "../protocol/grpc-http-status.js";
import { encodeFrame } from "../message/framing.js";
import { formatGrpcTimeout } from "./wire.js";
import type { MessageCodec } from "../message/message-codec.js";
import { CLIENT_QUEUE_BOUNDS, MessageQueue } from "../message/message-queue.js";
import { MessageReader, type MessageSink } from "../message/message-reader.js";
import { errorFromGrpcTrailers } from "./status.js";
import type { ResponseMode, StreamCall } from "../runtime/client-protocol.js";

/** One request message as a frame, compressed with `compression` when it is at least 1 KiB. */
export function requestFrame(payload: Uint8Array, compression: Compression | undefined): Buffer {
  const compress = compression !== undefined && payload.byteLength >= COMPRESS_MIN_BYTES;
  return encodeFrame(compress ? compression.compress(payload) : payload, compress);
}

/** Settings of one gRPC call. */
export interface GrpcCallSettings {
  readonly codec: MessageCodec;
  readonly maxBytes: number;
  /** Compression of request messages, if any. */
  readonly compression: Compression | undefined;
  readonly signal: AbortSignal;
  readonly options: CallOptions | undefined;
  /** The protocol on the stream (default gRPC). */
  readonly dialect?: StreamDialect;
}

/**
 * What sets apart the protocols whose calls are length-prefixed messages on an HTTP/2 stream:
 * gRPC (the status in HTTP/2 trailers), gRPC-Web (in a trailer frame flagged 0x80) and Connect
 * (in an end-stream message flagged 0x02). Each protocol folder defines its own.
 */
export interface StreamDialect {
  /** How errors name the protocol: `invalid content-type "…" in a <name> response`. */
  readonly name: string;
  /** The flag of the frame that ends the response (0: none, the outcome is in HTTP/2 trailers). */
  readonly endFlag: number;
  /** True for a response Content-Type of this protocol. */
  acceptsContentType(contentType: string): boolean;
  /** The response header naming the message compression, and the names it may take. */
  readonly encodingHeader: string;
  readonly compressions: ReadonlyMap<string, Compression>;
  /** Reads the end frame: the trailers it carries and the error it reports (undefined: OK). */
  readEndFrame(payload: Buffer): { trailers: HeaderMap; error: RpcError | undefined };
  /** True when only the end frame carries the outcome: a response that ends without one failed. */
  readonly endFrameRequired: boolean;
  /** The request header carrying the time left before the call's deadline, and its format. */
  readonly timeoutHeader: string;
  formatTimeout(ms: number): string;
  /**
   * True when a server stream of this protocol can come over HTTP/1.1 (its outcome is in the
   * body, not in HTTP/2 trailers): with `httpVersion: "1.1"` such calls go there.
   */
  readonly serverStreamsOverHttp1?: boolean;
}

/** gRPC's dialect: the outcome in HTTP/2 trailers (`grpc-status`), messages compressed per `grpc-encoding`. */
export const GRPC_DIALECT: StreamDialect = {
  name: "gRPC",
  endFlag: 0,
  acceptsContentType: (ct) => ct.startsWith("application/grpc") || ct.startsWith("application/triple"),
  encodingHeader: H.grpcEncoding,
  compressions: GRPC_COMPRESSIONS,
  readEndFrame: () => {
    throw new RpcError(Code.Internal, "protocol error: an end frame in a gRPC response");
  },
  endFrameRequired: false,
  timeoutHeader: H.grpcTimeout,
  formatTimeout: formatGrpcTimeout,
};

/** The call on a stream, set once: the stream's listeners are shared by every call. */
const kCall = Symbol("triple.grpcClientCall");
type TaggedStream = http2.ClientHttp2Stream & { [kCall]: EnvelopedClientCall };

function onResponse(this: TaggedStream, h: http2.IncomingHttpHeaders): void {
  this[kCall].onHeaders(h);
}
function onTrailers(this: TaggedStream, t: http2.IncomingHttpHeaders): void {
  this[kCall].trailers = t;
}
function onData(this: TaggedStream, chunk: Buffer): void {
  this[kCall].reader.onBodyData(chunk);
}
function onError(this: TaggedStream, e: Error): void {
  this[kCall].onStreamError(e);
}
function onEnd(this: TaggedStream): void {
  this[kCall].onResponseEnd();
}
function onClose(this: TaggedStream): void {
  this[kCall].onClose();
}

/**
 * One gRPC call on the client, on an open HTTP/2 stream: length-prefixed request messages out;
 * the response either as one message (`result()`: unary and client-streaming calls, no queue) or
 * into a {@link MessageQueue} (`responses`: bounded by messages and bytes, pausing the stream
 * while the caller lags); the outcome from `grpc-status` in the trailers or in a trailers-only
 * response.
 */
export class EnvelopedClientCall implements MessageSink, StreamCall {
  /** The response messages of a streaming call, ending when the trailers say OK and failing otherwise. */
  readonly responses: MessageQueue<unknown> | undefined;
  /** @internal */
  readonly reader: MessageReader;
  private headers: HeaderMap | undefined = undefined;
  /** Dubbo Java's `tri-exception-code` header (not 0): the response message is a Java exception. */
  private javaException = false;
  /** @internal */
  trailers: HeaderMap | undefined = undefined;
  private done = false;
  private value: unknown = undefined;
  private count = 0;
  private resolveResult: ((v: unknown) => void) | undefined = undefined;
  private rejectResult: ((e: unknown) => void) | undefined = undefined;
  private readonly outcomeResult: Promise<unknown> | undefined;
  private readonly dialect: StreamDialect;
  /** The error the end frame reported (undefined: none yet, or success). */
  private endError: RpcError | undefined = undefined;
  private endSeen = false;
  /** Stops the caller's request stream once the call is over (set by a request-streaming call). */
  private stopRequests: (() => void) | undefined = undefined;
  /** The response side has ended: the server is done with the call. */
  private serverEnded = false;

  constructor(
    private readonly stream: http2.ClientHttp2Stream,
    private readonly provider: Provider,
    private readonly settings: GrpcCallSettings,
    mode: ResponseMode,
  ) {
    this.dialect = settings.dialect ?? GRPC_DIALECT;
    this.reader = new MessageReader(settings.maxBytes, undefined, this, this.dialect.endFlag);
    if (mode === "stream") {
      this.responses = new MessageQueue<unknown>(
        (pause) => (pause ? stream.pause() : stream.resume()),
        CLIENT_QUEUE_BOUNDS,
        () => this.cancel(),
      );
    } else {
      this.outcomeResult = new Promise((resolve, reject) => {
        this.resolveResult = resolve;
        this.rejectResult = reject;
      });
      // Whoever awaits result() sees a failure; one that happens before is not "unhandled".
      this.outcomeResult.catch(() => {});
    }
    (stream as TaggedStream)[kCall] = this;
    stream.on("response", onResponse);
    stream.on("trailers", onTrailers);
    stream.on("data", onData);
    stream.on("error", onError);
    stream.on("end", onEnd);
    stream.on("close", onClose);
  }

  /** The one response of a unary or client-streaming call. */
  result(): Promise<unknown> {
    return this.outcomeResult as Promise<unknown>;
  }

  /** True once the call's outcome is known. */
  get settled(): boolean {
    return this.done;
  }

  private fail(err: unknown): void {
    if (this.done) return;
    this.done = true;
    if (this.responses) this.responses.fail(err);
    else this.rejectResult!(err);
    this.release();
  }

  /**
   * Lets go of the stream once the call is over. A call the server has ended (its response side
   * is complete) stops its request side: a clean half-close when nothing waits to be sent, as
   * grpc-js does, else RST_STREAM NO_ERROR; any other call is reset with CANCEL.
   */
  private release(): void {
    const s = this.stream;
    if (!s.destroyed) {
      if (!this.serverEnded) s.close(http2.constants.NGHTTP2_CANCEL);
      else if (!s.writableEnded) {
        if (s.writableLength === 0) s.end();
        else s.close(http2.constants.NGHTTP2_NO_ERROR);
      }
    }
    this.stopRequests?.();
  }

  /**
   * Calls `stop` once the call is over, whoever ended it: the server (its trailers may come while
   * the request side is still open), the caller, or a failure. Runs it at once if it is over.
   */
  onSettled(stop: () => void): void {
    if (this.done) stop();
    else this.stopRequests = stop;
  }

  /** @internal */
  onStreamError(e: Error): void {
    const signal = this.settings.signal;
    this.fail(signal.aborted ? signal.reason : streamError(this.provider, this.stream, e));
  }

  /** @internal */
  onHeaders(h: http2.IncomingHttpHeaders): void {
    this.headers = h;
    if (h[H.grpcStatus] !== undefined) {
      this.trailers = h; // trailers-only: the outcome is in these headers
      return;
    }
    const dialect = this.dialect;
    const err = checkResponseHeaders(h, this.provider, dialect);
    if (err) {
      this.fail(err);
      return;
    }
    const enc = h[dialect.encodingHeader];
    if (enc !== undefined && enc !== "identity") {
      const c = dialect.compressions.get(String(enc));
      if (!c) {
        this.fail(new RpcError(Code.Internal, `the response uses unsupported grpc-encoding "${enc}"`));
        return;
      }
      this.reader.compression = c;
    }
    const jx = h[H.triExceptionCode];
    if (jx !== undefined && String(jx) !== "0") this.javaException = true;
    this.settings.options?.onHeaders?.(metadataOf(h));
  }

  /** One response message (from the reader). */
  onMessage(payload: Buffer): void {
    if (this.done) return;
    const value = this.settings.codec.decodeResponse(payload, this.javaException);
    if (this.responses) {
      this.responses.push(value, payload.length);
      return;
    }
    if (++this.count > 1) {
      this.fail(new RpcError(Code.Unimplemented, "protocol error: more than one response message for a unary method"));
      return;
    }
    this.value = value;
  }

  /** The end frame: Connect's end-stream message, or gRPC-Web's trailers. */
  onEndFrame(_flags: number, payload: Buffer): void {
    try {
      const end = this.dialect.readEndFrame(payload);
      this.endSeen = true;
      this.endError = end.error;
      this.trailers = end.trailers;
    } catch (e) {
      this.fail(e);
    }
  }

  /** The reader ends on a malformed response; the outcome of a good one comes with 'end' or 'close'. */
  onMessagesEnd(err: RpcError | undefined): void {
    if (err) this.fail(err);
  }

  /**
   * The response side ended and every message before it was read: with trailers (or a
   * trailers-only response, or Connect's and gRPC-Web's end frame) the call is over, even while
   * the request side is still open (a server may finish first, RFC 9113 §8.1), and the request
   * side stops (see {@link release}).
   */
  onResponseEnd(): void {
    // Without trailers the stream was reset or broke: 'error' and 'close' say how.
    if (this.done || this.trailers === undefined) return;
    this.serverEnded = true;
    this.onClose();
  }

  /** @internal */
  onClose(): void {
    if (this.done) return;
    const err = this.outcome();
    if (err) {
      this.fail(err);
      return;
    }
    this.done = true;
    if (this.responses) this.responses.end();
    else if (this.count === 0) this.rejectResult!(new RpcError(Code.Unimplemented, "protocol error: the response has no message"));
    else this.resolveResult!(this.value);
    this.release();
  }

  /** The error the closed stream ended with, or undefined for OK. */
  private outcome(): unknown {
    const t = this.trailers;
    if (this.settings.signal.aborted) return this.settings.signal.reason;
    if (this.dialect.endFrameRequired && !this.endSeen) {
      return this.stream.rstCode
        ? streamClosedError(this.provider, this.stream)
        : new RpcError(Code.Internal, `protocol error: the ${this.dialect.name} ended without an end-stream message`);
    }
    if (!t) return streamClosedError(this.provider, this.stream);
    if (t !== this.headers) this.settings.options?.onTrailers?.(trailersOf(t));
    const err = this.endSeen ? this.endError : errorFromGrpcTrailers(t);
    if (!err && this.reader.truncated) return new RpcError(Code.Internal, "the response ended in the middle of a message");
    return err;
  }

  /**
   * Sends one request message; resolves when the stream can take more. Resolves false when the
   * call is already over (its outcome arrives through `responses`).
   */
  send(value: unknown): Promise<boolean> {
    if (this.stream.destroyed || this.stream.closed || this.done) return Promise.resolve(false);
    return this.write(this.frame(this.settings.codec.encodeRequest(value)));
  }

  /** Sends the arguments of a unary or server-streaming call as the one request message, and ends the request. */
  sendArgs(payload: Uint8Array): void {
    this.stream.end(this.frame(payload));
  }

  /** Frames one request message, compressed when the client compresses and it is worth it. */
  private frame(payload: Uint8Array): Buffer {
    return requestFrame(payload, this.settings.compression);
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

  /** Cancels the call (RST_STREAM CANCEL); its outcome is `cancelled` (or `reason`). */
  cancel(reason?: unknown): void {
    this.fail(reason ?? callerCancelled());
    if (!this.stream.destroyed && !this.serverEnded) this.stream.close(http2.constants.NGHTTP2_CANCEL);
  }
}

/**
 * A response that is not of the call's protocol at all: a non-200 status, or a content type
 * the dialect does not accept. Every dialect infers codes from HTTP statuses as gRPC does.
 */
function checkResponseHeaders(h: http2.IncomingHttpHeaders, provider: Provider, dialect: StreamDialect): RpcError | undefined {
  const status = Number(h[":status"]);
  if (status !== 200) {
    return new RpcError(codeFromGrpcHttpStatus(status), `HTTP status ${status} from ${provider.address}`, {
      metadata: metadataOf(h),
      httpStatus: status,
    });
  }
  const ct = String(h[H.contentType] ?? "");
  if (!dialect.acceptsContentType(ct)) {
    return new RpcError(Code.Unknown, `invalid content-type "${ct}" in a ${dialect.name} response`, { metadata: metadataOf(h) });
  }
  return undefined;
}

/** The request headers of a gRPC call. */
export function grpcHeaders(path: string, base: OutgoingHttpHeaders): OutgoingHttpHeaders {
  return { ...base, ":method": "POST", ":path": path, te: "trailers" };
}
