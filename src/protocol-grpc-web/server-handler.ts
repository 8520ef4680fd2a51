// Owns `GrpcWebHandler`. gRPC-Web on the same port, over HTTP/1.1 and HTTP/2: binary
// (`application/grpc-web`, `+proto`, `+json`) and base64 text (`application/grpc-web-text`). Must
// not change: gRPC-Web's wire rules (trailers as a flagged frame in the body) that grpc-web clients
// rely on.
import { Code } from "../protocol/code.js";
import type { Compression } from "../protocol/compression.js";
import { parseMediaType } from "../protocol/content-type.js";
import { serverShuttingDown, tooManyHeaders } from "../protocol/errors.js";
import { firstHeader, H } from "../protocol/headers.js";
import { RpcError } from "../protocol/rpc-error.js";
import { messageCodec } from "../message/message-codec.js";
import type { MessageReader } from "../message/message-reader.js";
import { EnvelopedServerCall } from "../protocol-grpc/server-call.js";
import { requestEncodingOf, responseEncoding } from "../protocol-grpc/server-handler.js";
import { sendGrpcStatus } from "../protocol-grpc/error-writer.js";
import { parseGrpcTimeout } from "../protocol-grpc/wire.js";
import { CallContext } from "../runtime/context.js";
import type { RegisteredMethod } from "../runtime/router.js";
import type { ServerCore } from "../runtime/server-core.js";
import type { ServerProtocol, ServerProtocolHandler } from "../runtime/server-protocol.js";
import type { BodySink, Exchange, Responder } from "../transport/server/exchange.js";
import { GrpcWebResponder } from "./responder.js";
import { Base64BodySink, GRPC_WEB_MEDIA_TYPES, type GrpcWebFormat, grpcWebFormatOf, isGrpcWebContentType } from "./wire.js";
import { quote } from "../protocol/wire-text.js";

/** The name gRPC-Web calls and refusals carry (`CallContext.protocol`, access log, telemetry). */
const GRPC_WEB = "grpc-web";

const base64Body = (reader: MessageReader): BodySink => new Base64BodySink(reader);

/**
 * gRPC-Web on the same port, over HTTP/1.1 and HTTP/2: binary (`application/grpc-web`,
 * `+proto`, `+json`) and base64 text (`application/grpc-web-text`). Every call kind runs; a
 * browser can only stream responses, other clients (connect-node, envoy) may stream both ways.
 */
class GrpcWebHandler implements ServerProtocolHandler {
  readonly name = GRPC_WEB;

  constructor(private readonly core: ServerCore) {}

  /** `application/grpc-web…` (before gRPC, whose content types it extends). */
  claims(ex: { readonly headers: Exchange["headers"] }): boolean {
    return isGrpcWebContentType(ex.headers[H.contentType]);
  }

  writeError(r: Responder, err: RpcError): void {
    sendGrpcStatus(r, err, { [H.contentType]: "application/grpc-web+proto" });
  }

  /** A stream under way cannot take a second ending: it is reset; else answered plainly. */
  cancel(_ctx: unknown, ex: Exchange, err: RpcError): void {
    if (ex.headersSent) ex.reset();
    else this.writeError(ex, err);
  }

  handle(ex: Exchange): void {
    const ct = firstHeader(ex.headers, H.contentType);
    const mt = parseMediaType(ct);
    const wf = mt && grpcWebFormatOf(mt.type);
    if (!wf || !mt) {
      const message = `unsupported gRPC-Web content type ${quote(ct ?? "")}; supported: ${GRPC_WEB_MEDIA_TYPES.join(", ")}`;
      ex.discardBody();
      sendGrpcStatus(ex, new RpcError(Code.Internal, message), { [H.contentType]: "application/grpc-web+proto" }, undefined, 415);
      return;
    }
    let route: RegisteredMethod;
    let timeoutMs: number | undefined;
    try {
      route = this.check(ex);
      timeoutMs = parseGrpcTimeout(firstHeader(ex.headers, H.grpcTimeout));
    } catch (e) {
      this.core.refused(ex, GRPC_WEB, e);
      ex.discardBody();
      sendGrpcStatus(ex, RpcError.from(e), { [H.contentType]: mt.type });
      return;
    }
    this.start(ex, route, mt.type, wf, timeoutMs);
  }

  private check(ex: Exchange): RegisteredMethod {
    if (ex.method !== "POST") throw new RpcError(Code.Unimplemented, `gRPC-Web calls use POST, not ${ex.method}`, { httpStatus: 405 });
    const limits = this.core.limits;
    if (ex.headerCount > limits.maxHeaderCount) throw tooManyHeaders(ex.headerCount, limits.maxHeaderCount);
    const route = this.core.router.resolve(ex.path, ex.headers);
    if (this.core.draining) throw serverShuttingDown();
    return route;
  }

  private start(ex: Exchange, route: RegisteredMethod, contentType: string, wf: GrpcWebFormat, timeoutMs: number | undefined): void {
    const md = route.descriptor;
    const ctx = new CallContext(md, ex.headers, GRPC_WEB, ex.httpVersion, ex.peer, timeoutMs);
    let requestEncoding: Compression | undefined;
    try {
      requestEncoding = requestEncodingOf(ex);
    } catch (e) {
      ex.discardBody();
      sendGrpcStatus(ex, RpcError.from(e), { [H.contentType]: contentType });
      return;
    }
    const encoding = responseEncoding(requestEncoding, firstHeader(ex.headers, H.grpcAcceptEncoding));
    const responder = new GrpcWebResponder(ex, ctx, contentType, encoding, requestEncoding !== undefined, wf.text);
    const codec = messageCodec(md, wf.format === "json" ? "protojson" : "proto");
    new EnvelopedServerCall(this.core, ex, route, ctx, codec, responder, requestEncoding, timeoutMs, wf.text ? base64Body : undefined);
  }
}

/** gRPC-Web's server half, in the server's protocol list. */
export const grpcWebServer: ServerProtocol = { name: GRPC_WEB, open: (core) => new GrpcWebHandler(core) };
