import { Code } from "../protocol/code.js";
import { type Compression, GRPC_ACCEPT_ENCODING, GRPC_COMPRESSIONS } from "../protocol/compression.js";
import { parseMediaType } from "../protocol/content-type.js";
import { encodeGrpcMessage, statusHeaders } from "../protocol/grpc-status.js";
import { H } from "../protocol/headers.js";
import { RpcError } from "../protocol/rpc-error.js";
import { parseGrpcTimeout } from "../protocol/timeout.js";
import type { Exchange, OutHeaders } from "../transport/exchange.js";
import { CallContext } from "./context.js";
import type { ServerCore } from "./core.js";
import { sendHttpError } from "./error-response.js";
import { GrpcCall } from "./grpc-call.js";
import { GRPC_MEDIA_TYPES, type GrpcMessageFormat, grpcCodecFor, grpcFormatOf } from "./grpc-codec.js";
import { GrpcResponder } from "./grpc-response.js";
import { HEALTH_SERVICE_NAME } from "./health.js";
import type { RegisteredMethod } from "./router.js";

type Headers = Readonly<Record<string, string | string[] | undefined>>;

function one(h: Headers, name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}

const acceptCache = new Map<string, Compression | undefined>();

/**
 * The encoding of compressed response messages: the request's own, else the first of ours the
 * client lists in `grpc-accept-encoding` (cached: clients send the same few values).
 */
function responseEncoding(requestEncoding: Compression | undefined, accept: string | undefined): Compression | undefined {
  if (requestEncoding || !accept) return requestEncoding;
  if (acceptCache.has(accept)) return acceptCache.get(accept);
  const names = accept.split(",").map((s) => s.trim().toLowerCase());
  const c = names.includes("gzip") ? GRPC_COMPRESSIONS.get("gzip") : names.includes("deflate") ? GRPC_COMPRESSIONS.get("deflate") : undefined;
  if (acceptCache.size < 64) acceptCache.set(accept, c);
  return c;
}

/**
 * gRPC over HTTP/2 (spec §4.2, decisions.md, gRPC's PROTOCOL-HTTP2): checks the request
 * headers, answers what is wrong with a trailers-only response, and hands good calls to a
 * {@link GrpcCall}.
 */
export class GrpcHandler {
  constructor(private readonly core: ServerCore) {}

  handle(ex: Exchange): void {
    if (ex.httpVersion !== "2") {
      this.rejectHttp1(ex);
      return;
    }
    const h = ex.headers;
    let contentType = "application/grpc";
    let route: RegisteredMethod;
    let format: GrpcMessageFormat;
    let timeoutMs: number | undefined;
    let requestEncoding: Compression | undefined;
    try {
      const ct = one(h, H.contentType);
      const mt = parseMediaType(ct);
      const f = mt && grpcFormatOf(mt.type);
      if (!f || !mt) {
        this.rejectContentType(ex, ct);
        return;
      }
      format = f;
      contentType = mt.type;
      if (ex.method !== "POST") throw new RpcError(Code.Unimplemented, `gRPC calls use POST, not ${ex.method}`);
      const limits = this.core.limits;
      if (ex.headerCount > limits.maxHeaderCount) {
        throw new RpcError(
          Code.ResourceExhausted,
          `too many request headers: ${ex.headerCount} (limit ${limits.maxHeaderCount})`,
        );
      }
      route = this.core.router.resolve(ex.path, h);
      timeoutMs = parseGrpcTimeout(one(h, H.grpcTimeout));
      const enc = one(h, H.grpcEncoding);
      if (enc !== undefined && enc !== "" && enc !== "identity") {
        requestEncoding = GRPC_COMPRESSIONS.get(enc.trim().toLowerCase());
        if (!requestEncoding) {
          throw new RpcError(
            Code.Unimplemented,
            `unsupported grpc-encoding "${enc}"; supported: ${GRPC_ACCEPT_ENCODING}`,
            { metadata: { [H.grpcAcceptEncoding]: GRPC_ACCEPT_ENCODING } },
          );
        }
      }
      // Health keeps answering while draining: that is how clients learn we are NOT_SERVING.
      if (this.core.draining && route.service.name !== HEALTH_SERVICE_NAME) {
        throw new RpcError(Code.Unavailable, "the server is shutting down");
      }
    } catch (e) {
      this.reject(ex, contentType, e);
      return;
    }

    const md = route.descriptor;
    const encoding = responseEncoding(requestEncoding, one(h, H.grpcAcceptEncoding));
    // Nobody outside the server can read the headers of a call whose context stays internal:
    // let them go now rather than keep them alive until the stream closes (ex.headers is then empty).
    if (!route.seesContext) ex.releaseHeaders();
    const ctx = new CallContext(md, ex.headers, "grpc", "2", ex.peer, timeoutMs);
    new GrpcCall(
      this.core,
      ex,
      route,
      ctx,
      grpcCodecFor(md, format),
      new GrpcResponder(ex, ctx, contentType, encoding, requestEncoding !== undefined),
      requestEncoding,
      timeoutMs,
    );
  }

  /** A call that fails before it starts: trailers-only with the status, request body dropped. */
  private reject(ex: Exchange, contentType: string, reason: unknown): void {
    const headers: OutHeaders = { "content-type": contentType };
    statusHeaders(RpcError.from(reason), headers);
    ex.respondHeadersOnly(headers);
    ex.discardBody();
  }

  /** gRPC says 415 for content types it does not speak; the grpc-status helps gRPC clients. */
  private rejectContentType(ex: Exchange, ct: string | undefined): void {
    const message = `unsupported gRPC content type "${ct ?? ""}"; supported: ${GRPC_MEDIA_TYPES.join(", ")}`;
    ex.respond(415, {
      "content-type": "application/grpc",
      "grpc-status": String(Code.Internal),
      "grpc-message": encodeGrpcMessage(message),
    });
    ex.discardBody();
  }

  /** HTTP/1.1 has no trailers for grpc-status: say so plainly (505) instead of half-working. */
  private rejectHttp1(ex: Exchange): void {
    const message = `${ex.path}: gRPC (Content-Type ${one(ex.headers, H.contentType)}) needs HTTP/2; use HTTP/2 or call the method as Triple HTTP unary (application/json)`;
    sendHttpError(ex, new RpcError(Code.Unimplemented, message, { httpStatus: 505, legacyStatus: 40 }), {
      "grpc-status": String(Code.Unimplemented),
      "grpc-message": encodeGrpcMessage(message),
    });
    ex.discardBody();
  }
}
