/**
 * Triple HTTP's call on the server: one body (or REST parameters) in, one encoded answer, a
 * download or an SSE stream out, errors as the JSON error body. The lifecycle (tracking, abort,
 * deadline, auth, one end) is `ServerCallLifecycle`'s; this file keeps Triple's wire rules.
 */
import type { RequestCodec, ResponseCodec } from "../codec/codec.js";
import { responseCodecFor } from "../codec/codec-table.js";
import { Code } from "../protocol/code.js";
import { type Compression, compressResponseBody } from "../protocol/compression.js";
import type { MediaType } from "../protocol/content-type.js";
import type { MethodDescriptor } from "../service/descriptors.js";
import { firstHeader, H, TRAILER_PREFIX } from "../protocol/headers.js";
import { RpcError } from "../protocol/rpc-error.js";
import { CallContext } from "../runtime/context.js";
import type { RestMatch } from "../runtime/rest-router.js";
import type { RegisteredMethod } from "../runtime/router.js";
import type { ServerCore } from "../runtime/server-core.js";
import { ServerCallLifecycle } from "../runtime/server-call-lifecycle.js";
import type { Exchange, OutHeaders } from "../transport/server/exchange.js";
import { negotiateResponse } from "./accept.js";
import { tripleProtoResponseCodec } from "./proto-body.js";
import { sendTripleError } from "./error-writer.js";
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
 * bound.
 */
export class TripleUnaryCall extends ServerCallLifecycle implements BodyTarget {
  private readonly respCodec: ResponseCodec;
  /** A REST call's arguments from the path, query and headers (body slots filled in later). */
  private restArgs: unknown[] | undefined = undefined;
  /** The body stream a streaming codec (multipart) reads, while it reads it. */
  private bodyStream: BodyStream | undefined = undefined;
  /** The call's streamed uploads (temp files), deleted when the call ends. */
  private uploads: UploadScope | undefined = undefined;

  constructor(
    core: ServerCore,
    ex: Exchange,
    private readonly req: TripleRequest,
  ) {
    const h = ex.headers;
    super(core, ex, req.route, new CallContext(req.route.descriptor, h, "triple", ex.httpVersion, ex.peer, req.timeoutMs));
    const own = responseCodecFor(req.codec.responseMediaType ?? req.mediaType.type) ?? JSON_CODEC;
    const negotiated = negotiateResponse(firstHeader(h, H.accept), own);
    this.respCodec = negotiated.mediaType === "application/proto" ? tripleProtoResponseCodec : negotiated;
    this.start(req.timeoutMs);
  }

  protected readRequest(): void {
    const req = this.req;
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
      this.handOver();
      const sse = new SseStream(this.core, this.ex, this.route, this.ctx, this.req.timeoutMs);
      if (uploads) sse.onEnd = () => uploads.release();
      sse.run(args);
      return;
    }
    this.invoke(args);
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
    this.dropUnreadBody();
    this.ctx.observer?.sent(typeof body === "string" ? Buffer.byteLength(body) : body.byteLength);
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
    } else {
      this.ex.respond(200, headers, out);
    }
    this.finish(undefined);
  }

  /** Streams a returned file or stream; the call's uploads stay until it ended (it may be one of them). */
  private sendDownload(download: Download): void {
    const uploads = this.uploads;
    this.uploads = undefined;
    this.finish(undefined);
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

  /** The JSON error body; OK was answered already (a body, a download, or an SSE hand-over). */
  protected writeEnd(err: RpcError | undefined): void {
    if (err === undefined) return;
    // A streaming codec's body: stop reading (and inflating) it before the exchange drops the rest.
    this.bodyStream?.detach();
    if (!this.ex.aborted) this.ex.discardBody(err.httpStatus === 413);
    sendTripleError(this.ex, err, undefined, this.core.dubboJsErrors);
  }

  /** The call's temp files go; a body still streaming after an error stops. */
  protected override release(err: RpcError | undefined): void {
    this.uploads?.release();
    if (err !== undefined) this.bodyStream?.detach();
  }
}
