// Owns `ConnectHandler`. The Connect protocol on the same port as everything else, HTTP/1.1 and
// HTTP/2: unary POST (`application/json|proto` with `connect-protocol-version`), GET for idempotent
// … Must not change: the Connect protocol's wire rules, as connect-es speaks them.
import { Code } from "../protocol/code.js";
import { type Compression, HTTP_COMPRESSIONS, negotiateEncoding } from "../protocol/compression.js";
import { parseMediaType } from "../protocol/content-type.js";
import { serverShuttingDown, tooManyHeaders } from "../protocol/errors.js";
import { firstHeader, H, type HeaderMap } from "../protocol/headers.js";
import { RpcError } from "../protocol/rpc-error.js";
import { messageCodec } from "../message/message-codec.js";
import { EnvelopedServerCall } from "../protocol-grpc/server-call.js";
import { parseTriTimeout } from "../protocol-triple/wire.js";
import { CallContext } from "../runtime/context.js";
import type { RegisteredMethod } from "../runtime/router.js";
import type { ServerCore } from "../runtime/server-core.js";
import type { ExchangeHead, ServerProtocol, ServerProtocolHandler } from "../runtime/server-protocol.js";
import type { Exchange, Responder } from "../transport/server/exchange.js";
import { type ConnectDialect, sendConnectError } from "./error-writer.js";
import { connectGetRequest, isConnectGet } from "./get-request.js";
import { ConnectStreamResponder } from "./responder.js";
import { ConnectUnaryCall } from "./server-call.js";
import { CH, type ConnectFormat, connectCompressionOf, isConnectStreamType, parseConnectTimeout, streamFormatOf, unaryFormatOf } from "./wire.js";
import { quote } from "../protocol/wire-text.js";

/** The name Connect calls and refusals carry (`CallContext.protocol`, access log, telemetry). */
const CONNECT = "connect";

function unsupported(message: string): RpcError {
  return new RpcError(Code.Unimplemented, message, { httpStatus: 415 });
}

/** The timeout of a call in its dialect: `connect-timeout-ms`, or `tri-service-timeout`. */
function timeoutOf(h: HeaderMap, dialect: ConnectDialect): number | undefined {
  if (dialect === "triple") return parseTriTimeout(H.triServiceTimeout, firstHeader(h, H.triServiceTimeout));
  return parseConnectTimeout(firstHeader(h, CH.timeoutMs));
}

/** `connect-protocol-version` must say 1 when present (required only on GET's `connect=v1`). */
function checkVersion(h: HeaderMap): void {
  const v = firstHeader(h, CH.protocolVersion);
  if (v !== undefined && v.trim() !== "1") {
    throw new RpcError(Code.InvalidArgument, `unsupported connect-protocol-version ${quote(v)}: this server speaks 1`);
  }
}

/**
 * The Connect protocol on the same port as everything else, HTTP/1.1 and HTTP/2: unary POST
 * (`application/json|proto` with `connect-protocol-version`), GET for idempotent methods, and
 * streams (`application/connect+json|proto`); also dubbo-js's Triple variant of it (the same
 * wire, `tri-*` headers, `?triple=v1.0.0` on GET).
 */
class ConnectHandler implements ServerProtocolHandler {
  readonly name = CONNECT;

  constructor(private readonly core: ServerCore) {}

  /**
   * A GET with a Connect (or dubbo-js) query to an RPC path (a REST GET may carry `?message=…`
   * too); another method with a Connect stream content type or `connect-protocol-version`.
   */
  claims(ex: ExchangeHead): boolean {
    if (ex.method === "GET") return isConnectGet(ex.query) && (this.core.rest === undefined || this.core.router.serves(ex.path));
    return isConnectStreamType(ex.headers[H.contentType]) || ex.headers[CH.protocolVersion] !== undefined;
  }

  /** A GET, a stream or a unary POST, by what claimed it. */
  handle(ex: Exchange): void {
    if (ex.method === "GET") this.handleGet(ex);
    else if (isConnectStreamType(ex.headers[H.contentType])) this.handleStream(ex);
    else this.handleUnary(ex);
  }

  writeError(r: Responder, err: RpcError): void {
    sendConnectError(r, err, "connect");
  }

  /** A stream under way cannot take a second ending: it is reset; else answered plainly. */
  cancel(_ctx: unknown, ex: Exchange, err: RpcError): void {
    if (ex.headersSent) ex.reset();
    else this.writeError(ex, err);
  }

  /** Common checks; returns the route. */
  private route(ex: Exchange, method: "POST" | "GET"): RegisteredMethod {
    if (ex.method !== method) {
      throw new RpcError(Code.Unimplemented, `HTTP method ${ex.method} is not supported: use ${method}`, {
        httpStatus: 405,
        metadata: { allow: method },
      });
    }
    const limits = this.core.limits;
    if (ex.headerCount > limits.maxHeaderCount) throw tooManyHeaders(ex.headerCount, limits.maxHeaderCount);
    const route = this.core.router.resolve(ex.path, ex.headers);
    if (this.core.draining) throw serverShuttingDown();
    return route;
  }

  /** A unary POST carrying `connect-protocol-version`. */
  handleUnary(ex: Exchange): void {
    try {
      const route = this.route(ex, "POST");
      checkVersion(ex.headers);
      const mt = parseMediaType(firstHeader(ex.headers, H.contentType));
      const format = mt && unaryFormatOf(mt.type);
      if (!format || !mt)
        throw unsupported(
          `unsupported Content-Type ${quote(firstHeader(ex.headers, H.contentType) ?? "")} for a Connect unary call; use application/json or application/proto`,
        );
      this.checkUnaryKind(route, format);
      const compression = connectCompressionOf(firstHeader(ex.headers, H.contentEncoding), "Content-Encoding");
      const timeoutMs = timeoutOf(ex.headers, "connect");
      const codec = messageCodec(route.descriptor, format === "json" ? "protojson" : "proto");
      new ConnectUnaryCall(this.core, ex, { route, codec, contentType: mt.type, dialect: "connect", timeoutMs, compression, message: undefined });
    } catch (e) {
      this.core.refused(ex, CONNECT, e);
      ex.discardBody((e as RpcError).httpStatus === 413);
      sendConnectError(ex, e, "connect");
    }
  }

  /** True when a GET is a Connect (or dubbo-js Triple) GET call; other GETs are not ours. */
  isGet(ex: Exchange): boolean {
    return isConnectGet(ex.query);
  }

  /** A Connect GET (`?connect=v1&encoding=json&message=…`) or dubbo-js's (`?triple=v1.0.0…`). */
  handleGet(ex: Exchange): void {
    const dialect: ConnectDialect = ex.query?.includes("triple=") ? "triple" : "connect";
    try {
      const route = this.route(ex, "GET");
      if (!route.descriptor.idempotent) {
        throw new RpcError(
          Code.Unimplemented,
          `${route.descriptor.path} has side effects: call it with POST (mark a side-effect-free unary method @Method({ idempotent: true }) to allow GET)`,
          {
            httpStatus: 405,
            metadata: { allow: "POST" },
          },
        );
      }
      const q = connectGetRequest(ex.query ?? "", this.core.limits.maxBodyBytes);
      const codec = messageCodec(route.descriptor, q.format === "json" ? "protojson" : "proto");
      const timeoutMs = timeoutOf(ex.headers, dialect);
      const contentType = q.format === "json" ? "application/json" : "application/proto";
      new ConnectUnaryCall(this.core, ex, { route, codec, contentType, dialect, timeoutMs, compression: q.compression, message: q.message });
    } catch (e) {
      this.core.refused(ex, CONNECT, e);
      sendConnectError(ex, e, dialect);
    }
  }

  /** Streams need the streaming content type; a unary method sent as a stream is 415, and the reverse too. */
  private checkUnaryKind(route: RegisteredMethod, format: ConnectFormat): void {
    const kind = route.descriptor.kind;
    if (kind !== "unary") {
      throw unsupported(`${route.descriptor.path} is ${kind.replace("_", "-")}: call it as a stream (Content-Type application/connect+${format})`);
    }
  }

  /** A stream: `application/connect+json|proto`. */
  handleStream(ex: Exchange): void {
    const h = ex.headers;
    const dialect: ConnectDialect = firstHeader(h, H.triProtocolVersion) !== undefined ? "triple" : "connect";
    const mt = parseMediaType(firstHeader(h, H.contentType));
    const format = mt && streamFormatOf(mt.type);
    let route: RegisteredMethod;
    try {
      route = this.route(ex, "POST");
      if (!format || !mt)
        throw unsupported(
          `unsupported Content-Type ${quote(String(firstHeader(h, H.contentType)))}; Connect streams use application/connect+json or application/connect+proto`,
        );
      this.checkStreamKind(ex, route);
    } catch (e) {
      this.core.refused(ex, CONNECT, e);
      if ((e as RpcError).httpStatus === 505) ex.discardBody(true);
      else ex.discardBody();
      sendConnectError(ex, e, dialect);
      return;
    }
    this.startStream(ex, route, mt.type, format, dialect);
  }

  private checkStreamKind(ex: Exchange, route: RegisteredMethod): void {
    const md = route.descriptor;
    if (md.kind === "unary") {
      throw unsupported(`${md.path} is unary: call it with Content-Type application/json or application/proto, not a stream`);
    }
    if (md.kind === "bidi_streaming" && ex.httpVersion !== "2") {
      throw new RpcError(Code.Unimplemented, `${md.path} is bidi-streaming, which needs HTTP/2; this request came over HTTP/1.1`, { httpStatus: 505 });
    }
  }

  private startStream(ex: Exchange, route: RegisteredMethod, contentType: string, format: ConnectFormat, dialect: ConnectDialect): void {
    const h = ex.headers;
    const md = route.descriptor;
    let timeoutMs: number | undefined;
    let requestEncoding: Compression | undefined;
    let failure: RpcError | undefined;
    try {
      timeoutMs = timeoutOf(h, dialect);
      requestEncoding = connectCompressionOf(firstHeader(h, CH.contentEncoding), CH.contentEncoding);
    } catch (e) {
      failure = RpcError.from(e);
    }
    const encoding = requestEncoding ?? negotiateEncoding(firstHeader(h, CH.acceptEncoding), HTTP_COMPRESSIONS);
    const ctx = new CallContext(md, h, CONNECT, ex.httpVersion, ex.peer, timeoutMs);
    const responder = new ConnectStreamResponder(ex, ctx, contentType, encoding, requestEncoding !== undefined, dialect);
    if (failure) {
      // Once the protocol is known, a stream's errors travel in its end-stream message (HTTP 200).
      this.core.refused(ex, CONNECT, failure);
      ex.discardBody();
      responder.finish(failure);
      return;
    }
    new EnvelopedServerCall(this.core, ex, route, ctx, messageCodec(md, format === "json" ? "protojson" : "proto"), responder, requestEncoding, timeoutMs);
  }
}

/** Connect's server half (and dubbo-js's Triple variant of it), in the server's protocol list. */
export const connectServer: ServerProtocol = { name: CONNECT, open: (core) => new ConnectHandler(core) };
