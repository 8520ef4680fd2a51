// Owns `responseEncoding`, `requestEncodingOf`, `GrpcHandler`. The encoding of compressed response
// messages: the request's own, else the first of ours the client lists in `grpc-accept-encoding`
// (cached: clients send the same few values). Must not change: gRPC's wire rules (5-byte message
// prefix, grpc-status in trailers) that grpc-js and other peers rely on.
import { Code } from "../protocol/code.js";
import { type Compression, GRPC_ACCEPT_ENCODING, GRPC_COMPRESSIONS } from "../protocol/compression.js";
import { parseMediaType } from "../protocol/content-type.js";
import { serverShuttingDown, tooManyHeaders } from "../protocol/errors.js";
import { firstHeader, H } from "../protocol/headers.js";
import { RpcError } from "../protocol/rpc-error.js";
import { tagOfHeaders } from "../runtime/call-tag.js";
import { CallContext } from "../runtime/context.js";
import { HEALTH_SERVICE_NAME } from "../runtime/health.js";
import type { RegisteredMethod } from "../runtime/router.js";
import type { ServerCore } from "../runtime/server-core.js";
import type { ServerProtocol, ServerProtocolHandler } from "../runtime/server-protocol.js";
import type { Exchange, Responder } from "../transport/server/exchange.js";
import type { GrpcMessageFormat } from "../message/codec-types.js";
import { GRPC_MEDIA_TYPES, grpcFormatOf, isGrpcContentType } from "./wire.js";
import { messageCodec } from "../message/message-codec.js";
import { EnvelopedServerCall } from "./server-call.js";
import { GrpcResponder } from "./responder.js";
import { sendGrpcHttp1Error, sendGrpcStatus } from "./error-writer.js";
import { parseGrpcTimeout } from "./wire.js";
import { cutText, quote } from "../protocol/wire-text.js";

/** The name gRPC calls and refusals carry (`CallContext.protocol`, access log, telemetry). */
const GRPC = "grpc";

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

const acceptCache = new Map<string, Compression | undefined>();

/**
 * The encoding of compressed response messages: the request's own, else the first of ours the
 * client lists in `grpc-accept-encoding` (cached: clients send the same few values).
 */
export function responseEncoding(requestEncoding: Compression | undefined, accept: string | undefined): Compression | undefined {
  if (requestEncoding || !accept) return requestEncoding;
  if (acceptCache.has(accept)) return acceptCache.get(accept);
  const names = accept.split(",").map((s) => s.trim().toLowerCase());
  const c = names.includes("gzip") ? GRPC_COMPRESSIONS.get("gzip") : names.includes("deflate") ? GRPC_COMPRESSIONS.get("deflate") : undefined;
  if (acceptCache.size < 64) acceptCache.set(accept, c);
  return c;
}

/** The request's `grpc-encoding`; undefined for identity, `unimplemented` for one we lack. */
export function requestEncodingOf(ex: Exchange): Compression | undefined {
  const enc = firstHeader(ex.headers, H.grpcEncoding);
  if (enc === undefined || enc === "" || enc === "identity") return undefined;
  const c = GRPC_COMPRESSIONS.get(enc.trim().toLowerCase());
  if (c) return c;
  throw new RpcError(Code.Unimplemented, `unsupported grpc-encoding ${quote(enc)}; supported: ${GRPC_ACCEPT_ENCODING}`, {
    metadata: { [H.grpcAcceptEncoding]: GRPC_ACCEPT_ENCODING },
  });
}

/** What a gRPC request's headers say, once they passed every check. */
interface GrpcRequest {
  readonly route: RegisteredMethod;
  readonly timeoutMs: number | undefined;
  readonly requestEncoding: Compression | undefined;
}

/**
 * gRPC over HTTP/2 (gRPC's PROTOCOL-HTTP2): checks the request headers, answers what is wrong
 * with a trailers-only response, and hands good calls to a {@link EnvelopedServerCall}.
 */
class GrpcHandler implements ServerProtocolHandler {
  readonly name = GRPC;

  constructor(private readonly core: ServerCore) {}

  /** `application/grpc…` and Dubbo's `application/triple+wrapper…` (gRPC-Web is claimed before). */
  claims(ex: { readonly headers: Exchange["headers"] }): boolean {
    return isGrpcContentType(ex.headers[H.contentType]);
  }

  writeError(r: Responder, err: RpcError): void {
    sendGrpcStatus(r, err, { [H.contentType]: "application/grpc" });
  }

  cancel(_ctx: unknown, ex: Exchange, err: RpcError): void {
    this.writeError(ex, err);
  }

  handle(ex: Exchange): void {
    if (ex.httpVersion !== "2") {
      this.rejectHttp1(ex);
      return;
    }
    const ct = firstHeader(ex.headers, H.contentType);
    const mt = parseMediaType(ct);
    const format = mt && grpcFormatOf(mt.type);
    if (!format || !mt) {
      this.rejectContentType(ex, ct);
      return;
    }
    let req: GrpcRequest;
    try {
      req = this.check(ex);
    } catch (e) {
      this.core.refused(ex, GRPC, e);
      sendGrpcStatus(ex, RpcError.from(e), { [H.contentType]: mt.type });
      ex.discardBody();
      return;
    }
    this.start(ex, req, mt.type, format);
  }

  /** Everything that can be refused before any byte of the body is read. */
  private check(ex: Exchange): GrpcRequest {
    if (ex.method !== "POST") throw new RpcError(Code.Unimplemented, `gRPC calls use POST, not ${ex.method}`);
    const limits = this.core.limits;
    if (ex.headerCount > limits.maxHeaderCount) throw tooManyHeaders(ex.headerCount, limits.maxHeaderCount);
    const route = this.core.router.resolve(ex.path, ex.headers);
    const timeoutMs = parseGrpcTimeout(firstHeader(ex.headers, H.grpcTimeout));
    const requestEncoding = requestEncodingOf(ex);
    // Health keeps answering while draining: that is how clients learn we are NOT_SERVING.
    if (this.core.draining && route.service.name !== HEALTH_SERVICE_NAME) throw serverShuttingDown();
    return { route, timeoutMs, requestEncoding };
  }

  private start(ex: Exchange, req: GrpcRequest, contentType: string, format: GrpcMessageFormat): void {
    const { route, timeoutMs, requestEncoding } = req;
    const md = route.descriptor;
    const encoding = responseEncoding(requestEncoding, firstHeader(ex.headers, H.grpcAcceptEncoding));
    // Nobody outside the server can read the headers of a call whose context stays internal:
    // let them go once the call is tracked (telemetry reads its trace context there) rather than
    // keep them alive until the stream closes (ex.headers is then empty).
    // A call tagged for Dubbo's tag routing keeps its headers: the handler's calls carry the tag on.
    const keep = route.seesContext || tagOfHeaders(ex.headers) !== undefined;
    const ctx = new CallContext(md, keep ? ex.headers : NO_HEADERS, GRPC, "2", ex.peer, timeoutMs);
    const responder = new GrpcResponder(ex, ctx, contentType, encoding, requestEncoding !== undefined);
    new EnvelopedServerCall(this.core, ex, route, ctx, messageCodec(md, format), responder, requestEncoding, timeoutMs);
    if (!keep) ex.releaseHeaders();
  }

  /** gRPC says 415 for content types it does not speak; the grpc-status helps gRPC clients. */
  private rejectContentType(ex: Exchange, ct: string | undefined): void {
    const message = `unsupported gRPC content type ${quote(ct ?? "")}; supported: ${GRPC_MEDIA_TYPES.join(", ")}`;
    const err = new RpcError(Code.Internal, message);
    this.core.refused(ex, GRPC, err);
    sendGrpcStatus(ex, err, { [H.contentType]: "application/grpc" }, undefined, 415);
    ex.discardBody();
  }

  /** HTTP/1.1 has no trailers for grpc-status: say so plainly (505) instead of half-working. */
  private rejectHttp1(ex: Exchange): void {
    const ct = firstHeader(ex.headers, H.contentType);
    const message = `${cutText(ex.path)}: gRPC (Content-Type ${quote(ct ?? "")}) needs HTTP/2; use HTTP/2 or call the method as Triple HTTP unary (application/json)`;
    const err = new RpcError(Code.Unimplemented, message, { httpStatus: 505, legacyStatus: 40 });
    this.core.refused(ex, GRPC, err);
    sendGrpcHttp1Error(ex, err);
    ex.discardBody();
  }
}

/** gRPC's server half, in the server's protocol list. */
export const grpcServer: ServerProtocol = { name: GRPC, open: (core) => new GrpcHandler(core) };
