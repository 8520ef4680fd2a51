/**
 * Connect's unary call on the server (POST, or GET for idempotent methods): one bare message
 * each way, errors as Connect's JSON. The lifecycle (tracking, abort, deadline, auth, one end)
 * is `ServerCallLifecycle`'s; this file keeps only Connect's wire rules.
 */
import { type NumberLimits, withNumberLimits } from "../codec/big-numbers.js";
import { Code } from "../protocol/code.js";
import { type Compression, compressResponseBody } from "../protocol/compression.js";
import { H, TRAILER_PREFIX } from "../protocol/headers.js";
import { RpcError } from "../protocol/rpc-error.js";
import type { MessageCodec } from "../message/codec-types.js";
import { BodyCollector, type BodyTarget } from "../protocol-triple/request-body.js";
import { CallContext } from "../runtime/context.js";
import type { RegisteredMethod } from "../runtime/router.js";
import type { ServerCore } from "../runtime/server-core.js";
import { ServerCallLifecycle } from "../runtime/server-call-lifecycle.js";
import type { Exchange, OutHeaders } from "../transport/server/exchange.js";
import { type ConnectDialect, sendConnectError } from "./error-writer.js";

/** What a unary Connect request says, once its headers (or GET query) passed every check. */
export interface ConnectUnaryRequest {
  readonly route: RegisteredMethod;
  readonly codec: MessageCodec;
  /** The response's Content-Type: the request's media type. */
  readonly contentType: string;
  readonly dialect: ConnectDialect;
  readonly timeoutMs: number | undefined;
  /** The body's Content-Encoding (or a GET's `compression`), undefined for identity. */
  readonly compression: Compression | undefined;
  /** A GET's message, already out of the query; undefined: read the POST body. */
  readonly message: Buffer | undefined;
}

/**
 * The request message's arguments. A message that does not decode is the caller's mistake:
 * Connect says `invalid_argument` (HTTP 400) where gRPC's codecs say `internal`.
 */
function decodeArgs(codec: MessageCodec, data: Buffer, limits: NumberLimits): unknown[] {
  try {
    return withNumberLimits(limits, () => codec.decodeRequest(data));
  } catch (e) {
    if (e instanceof RpcError && e.code === Code.Internal) throw new RpcError(Code.InvalidArgument, e.message, { cause: e });
    throw e;
  }
}

/**
 * One unary Connect call (POST, or GET for idempotent methods): the body is one bare message in
 * the method's codec, the answer one bare message with the request's Content-Type, trailers as
 * `trailer-` headers, errors as Connect's error JSON with Connect's HTTP status.
 */
export class ConnectUnaryCall extends ServerCallLifecycle implements BodyTarget {
  constructor(
    core: ServerCore,
    ex: Exchange,
    private readonly req: ConnectUnaryRequest,
  ) {
    super(core, ex, req.route, new CallContext(req.route.descriptor, ex.headers, "connect", ex.httpVersion, ex.peer, req.timeoutMs));
    this.start(req.timeoutMs);
  }

  protected readRequest(): void {
    const message = this.req.message;
    if (message !== undefined) this.onBody(undefined, message);
    else new BodyCollector(this.ex, this.core.limits.maxBodyBytes, this);
  }

  onBody(err: RpcError | undefined, raw: Buffer): void {
    if (err) {
      this.fail(err);
      return;
    }
    if (this.finished) return;
    let args: unknown[];
    try {
      const { compression } = this.req;
      // An empty body is the empty message, compressed or not.
      this.ctx.observer?.received(raw.length);
      const data = compression && raw.length > 0 ? compression.decompress(raw, this.core.limits.maxBodyBytes) : raw;
      args = decodeArgs(this.req.codec, data, this.core.limits);
    } catch (e) {
      this.fail(e);
      return;
    }
    this.invoke(args);
  }

  handlerReturned(value: unknown): void {
    if (this.finished) return;
    let body: Buffer | string;
    const codec = this.req.codec;
    try {
      // JSON goes out as the string it was built as: no copy into a Buffer first.
      body = codec.encodeResponseText ? codec.encodeResponseText(value) : codec.encodeResponse(value);
    } catch (e) {
      this.fail(e instanceof RpcError ? e : new RpcError(Code.Internal, `cannot encode the response: ${(e as Error).message}`, { cause: e }));
      return;
    }
    this.ctx.observer?.sent(typeof body === "string" ? Buffer.byteLength(body) : body.length);
    const headers: OutHeaders = { [H.contentType]: this.req.contentType };
    this.ctx.copyResponseHeadersTo(headers);
    this.ctx.copyResponseTrailersTo(headers, TRAILER_PREFIX);
    this.ex.respond(200, headers, compressResponseBody(body, this.ex.headers, headers));
    this.finish(undefined);
  }

  /** Connect's error JSON with its HTTP status, trailers as `trailer-` headers; OK was answered already. */
  protected writeEnd(err: RpcError | undefined): void {
    if (err === undefined) return;
    if (!this.ex.aborted) this.ex.discardBody(err.httpStatus === 413);
    let extra: OutHeaders | undefined;
    if (this.ctx.hasResponseTrailers) this.ctx.copyResponseTrailersTo((extra = {}), TRAILER_PREFIX);
    sendConnectError(this.ex, err, this.req.dialect, extra);
  }
}
