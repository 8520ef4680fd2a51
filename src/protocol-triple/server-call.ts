import type { RequestCodec, ResponseCodec } from "../codec/codec.js";
import { responseCodecFor } from "../codec/codec-table.js";
import { Code } from "../protocol/code.js";
import { type Compression, compressResponseBody } from "../protocol/compression.js";
import type { MediaType } from "../protocol/content-type.js";
import type { MethodDescriptor } from "../service/descriptors.js";
import { clientCancelled, deadlineExceeded } from "../protocol/errors.js";
import { firstHeader, H, TRAILER_PREFIX } from "../protocol/headers.js";
import { RpcError } from "../protocol/rpc-error.js";
import { CallContext } from "../runtime/context.js";
import { type HandlerOutcome, invokeHandler } from "../runtime/handler-result.js";
import type { RestMatch } from "../runtime/rest-router.js";
import type { RegisteredMethod } from "../runtime/router.js";
import type { ServerCore } from "../runtime/server-core.js";
import type { AbortSink, Exchange, OutHeaders } from "../transport/server/exchange.js";
import { negotiateResponse } from "./accept.js";
import { tripleProtoResponseCodec } from "./proto-body.js";
import { sendHttpError } from "../runtime/error-body.js";
import { BodyCollector, type BodyStream, type BodyTarget, boundedBodyStream } from "./request-body.js";
import { SseStream } from "./sse.js";
import { DownloadSender } from "./download.js";
import { type Download, downloadOf } from "../service/download.js";
import { UploadScope } from "../codec/upload-store.js";

/** What a Triple HTTP request's headers say, once they passed every check. */
export interface TripleRequest {
  readonly route: RegisteredMethod;
  readonly codec: RequestCodec;
  readonly mediaType: MediaType;
  readonly timeoutMs: number | undefined;
  readonly compression: Compression | undefined;
  /** The REST route matched (`@Get("/users/{id}")` …); undefined on RPC paths. */
  readonly rest: RestMatch | undefined;
}

const JSON_CODEC = responseCodecFor("application/json") as ResponseCodec;

/**
 * One Triple HTTP unary call on the server, straight-line: one body read, one decode, one call,
 * one encode, one response; no async generators and no `await` between the socket and the
 * method. A server-streaming method is handed to an {@link SseStream} once its arguments are
 * bound. The call is its exchange's {@link AbortSink}.
 */
export class TripleUnaryCall implements AbortSink, HandlerOutcome, BodyTarget {
  private readonly route: RegisteredMethod;
  private readonly ctx: CallContext;
  private readonly respCodec: ResponseCodec;
  private readonly req: TripleRequest;
  private timer: NodeJS.Timeout | undefined = undefined;
  private finished = false;
  /** A REST call's arguments from the path, query and headers (body slots filled in later). */
  private restArgs: unknown[] | undefined = undefined;
  /** The body stream a streaming codec (multipart) reads, while it reads it. */
  private bodyStream: BodyStream | undefined = undefined;
  /** The call's streamed uploads (temp files), deleted when the call ends. */
  private uploads: UploadScope | undefined = undefined;

  constructor(
    private readonly core: ServerCore,
    private readonly ex: Exchange,
    req: TripleRequest,
  ) {
    this.req = req;
    const route = (this.route = req.route);
    const h = ex.headers;
    this.ctx = new CallContext(route.descriptor, h, "triple", ex.httpVersion, ex.peer, req.timeoutMs);
    core.track(this.ctx, ex);
    ex.onAbort(this);
    const timeoutMs = req.timeoutMs;
    if (timeoutMs !== undefined) this.timer = setTimeout(() => this.onDeadline(timeoutMs), timeoutMs);
    const own = responseCodecFor(req.codec.responseMediaType ?? req.mediaType.type) ?? JSON_CODEC;
    const negotiated = negotiateResponse(firstHeader(h, H.accept), own);
    this.respCodec = negotiated.mediaType === "application/proto" ? tripleProtoResponseCodec : negotiated;
    // Authentication reads headers only: a caller without credentials never gets its body parsed.
    const authorize = route.authorize;
    if (authorize === undefined) this.readArgs(req);
    else authorize(this.ctx).then(() => this.finished || this.readArgs(req), (e) => this.fail(e));
  }

  private readArgs(req: TripleRequest): void {
    if (req.rest !== undefined && !this.readRestArgs(req.rest)) return;
    const { codec, mediaType, compression } = req;
    const md = this.bodyMethod();
    const limits = this.core.limits;
    if (codec.decodeStream) {
      const max = codec.bodyLimit ? codec.bodyLimit(md, limits) : limits.maxBodyBytes;
      const body = (this.bodyStream = boundedBodyStream(this.ex, compression, max));
      const store = this.core.uploads;
      if (store && codec.streamsFiles?.(md)) {
        const scope = (this.uploads = new UploadScope(store, this.ex.peer.address));
        // Shutdown and other cancellations abort the context: the temp files go with the call.
        this.ctx.signal.addEventListener("abort", () => scope.release(), { once: true });
      }
      codec.decodeStream(md, body.stream, mediaType, limits, this.uploads).then(
        (args) => this.onArgs(args),
        (e) => this.fail(e),
      );
      return;
    }
    new BodyCollector(this.ex, limits.maxBodyBytes, this);
  }

  /** The method as the body codecs see it: on a REST route, its body parameters only. */
  private bodyMethod(): MethodDescriptor {
    return this.req.rest?.binder.body ?? this.route.descriptor;
  }

  /**
   * Binds a REST request's path, query and header parameters; true when the body is still to be
   * read (some parameter comes from it). Without body parameters the call goes on at once.
   */
  private readRestArgs(rest: RestMatch): boolean {
    try {
      this.restArgs = rest.binder.bind(rest.pathValues, this.ex.query, this.ex.headers, this.core.limits);
    } catch (e) {
      this.fail(e);
      return false;
    }
    if (rest.binder.body !== undefined) return true;
    // A body nobody reads is dropped once answered (node's HTTP/2 ends a HEAD stream's writable
    // side at once, so discarding there would close the stream before the answer).
    if (!rest.head) this.ex.discardBody(false);
    this.onArgs([]);
    return false;
  }

  /** The whole body arrived (or could not): decompress, decode, bind. */
  onBody(err: RpcError | undefined, raw: Buffer): void {
    if (err) {
      this.fail(err);
      return;
    }
    this.ctx.observer?.received(raw.length);
    const { codec, mediaType, compression } = this.req;
    const limits = this.core.limits;
    let args: unknown[];
    try {
      const data = compression ? compression.decompress(raw, limits.maxBodyBytes) : raw;
      args = (codec.decode as NonNullable<RequestCodec["decode"]>)(this.bodyMethod(), data, mediaType, limits);
    } catch (e) {
      this.fail(e);
      return;
    }
    this.onArgs(args);
  }

  private onArgs(args: unknown[]): void {
    if (this.finished) return;
    const rest = this.req.rest;
    if (rest !== undefined) args = rest.binder.merge(this.restArgs as unknown[], args);
    if (this.route.descriptor.kind === "server_streaming") {
      // The stream's handler reads the uploads: they go when the stream ends, not now.
      const uploads = this.uploads;
      this.uploads = undefined;
      this.end();
      const sse = new SseStream(this.ex, this.route, this.ctx, this.core, this.req.timeoutMs);
      if (uploads) sse.onEnd = () => uploads.release();
      sse.start(args);
      return;
    }
    invokeHandler(this.route, this.ctx, args, this);
  }

  handlerFailed(reason: unknown): void {
    this.fail(reason);
  }

  handlerReturned(value: unknown): void {
    if (this.finished) return;
    const download = downloadOf(value);
    if (download) {
      this.sendDownload(download);
      return;
    }
    let body: Buffer | string;
    try {
      body = this.respCodec.encode(this.route.descriptor, value);
    } catch (e) {
      this.fail(new RpcError(Code.Internal, `cannot encode the response: ${(e as Error).message}`, { cause: e }));
      return;
    }
    this.end();
    this.dropUnreadBody();
    this.ctx.observer?.sent(typeof body === "string" ? Buffer.byteLength(body) : body.byteLength);
    this.core.untrack(this.ctx, undefined);
    const headers: OutHeaders = { [H.contentType]: this.respCodec.mediaType };
    this.ctx.copyResponseHeadersTo(headers);
    // Unary trailers travel as `trailer-` headers, as Connect and dubbo-js send and read them.
    this.ctx.copyResponseTrailersTo(headers, TRAILER_PREFIX);
    const out = compressResponseBody(body, this.ex.headers, headers);
    if (this.req.rest?.head) {
      // HEAD: the GET answer's headers, its length included, and no body (node's HTTP/1.1
      // server drops a HEAD response's body itself and keeps the length).
      headers[H.contentLength] = typeof out === "string" ? Buffer.byteLength(out) : out.byteLength;
      this.ex.respond(200, headers, this.ex.httpVersion === "1.1" ? out : undefined);
      return;
    }
    this.ex.respond(200, headers, out);
  }

  /** Streams a returned file or stream; the call's uploads stay until it ended (it may be one of them). */
  private sendDownload(download: Download): void {
    const uploads = this.uploads;
    this.uploads = undefined;
    this.end();
    this.core.untrack(this.ctx, undefined);
    const headers: OutHeaders = {};
    this.ctx.copyResponseHeadersTo(headers);
    this.ctx.copyResponseTrailersTo(headers, TRAILER_PREFIX);
    // The download may be the upload still streaming in: the body is read until the download ends.
    new DownloadSender(this.ex, download, headers, () => {
      this.dropUnreadBody();
      uploads?.release();
    });
  }

  /**
   * A handler that started before its upload ended (a streamed last parameter) may return
   * without reading it all: stop reading, and drop the rest of the body.
   */
  private dropUnreadBody(): void {
    const b = this.bodyStream;
    if (!b || b.stream.readableEnded || this.ex.aborted) return;
    b.detach();
    this.ex.discardBody();
  }

  /** Marks the call over and stops its timer; the context stays tracked for an SSE hand-over. */
  private end(): void {
    this.finished = true;
    if (this.timer) clearTimeout(this.timer);
    this.uploads?.release();
  }

  private fail(e: unknown): void {
    if (this.finished) return;
    this.end();
    const err = RpcError.from(e);
    this.core.untrack(this.ctx, err);
    // A streaming codec's body: stop reading (and inflating) it before the exchange drops the rest.
    this.bodyStream?.detach();
    if (!this.ex.aborted) this.ex.discardBody(err.httpStatus === 413);
    sendHttpError(this.ex, err, undefined, this.core.dubboJsErrors);
  }

  onExchangeAbort(): void {
    if (this.finished) return;
    this.end();
    const err = clientCancelled();
    this.bodyStream?.detach();
    this.core.untrack(this.ctx, err);
    this.ctx.abort(err);
  }

  private onDeadline(timeoutMs: number): void {
    const err = deadlineExceeded(timeoutMs);
    this.ctx.abort(err);
    this.fail(err);
  }
}
