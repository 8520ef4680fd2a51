// Owns `TripleHttpHandler`. The Triple HTTP unary protocol: `POST /<interface>/<method>` over
// HTTP/1.1 or HTTP/2 with a plain body (JSON, protobuf, form, multipart, text, XML). Must not
// change: Triple's wire rules as Dubbo Java speaks them (tri-* headers, the HTTP unary and stream
// forms).
import { unsupportedMediaType } from "../codec/bind-error.js";
import { HEALTH_SERVICE_NAME } from "../runtime/health.js";
import { tripleProtoRequestCodec } from "./proto-body.js";
import type { RequestCodec } from "../codec/codec.js";
import { protoRequestCodec } from "../codec/proto-codec.js";
import { requestCodecFor, supportedRequestTypes } from "../codec/codec-table.js";
import { jsonRequestCodec } from "../codec/json-codec.js";
import type { RestMatch } from "../runtime/rest-router.js";
import { Code } from "../protocol/code.js";
import { type Compression, HTTP_ACCEPT_ENCODING, HTTP_COMPRESSIONS } from "../protocol/compression.js";
import { type MediaType, parseMediaType } from "../protocol/content-type.js";
import { bodyTooLarge, serverShuttingDown, tooManyHeaders } from "../protocol/errors.js";
import { firstHeader, H, type HeaderMap } from "../protocol/headers.js";
import { RpcError } from "../protocol/rpc-error.js";
import type { ServerCore } from "../runtime/server-core.js";
import type { ServerProtocol, ServerProtocolHandler } from "../runtime/server-protocol.js";
import type { Exchange, Responder } from "../transport/server/exchange.js";
import { sendTripleError } from "./error-writer.js";
import { type TripleRequest, TripleUnaryCall } from "./server-call.js";
import { parseTriTimeout } from "./wire.js";
import { quote } from "../protocol/wire-text.js";

/** The name Triple HTTP calls and refusals carry (`CallContext.protocol`, access log, telemetry). */
const TRIPLE = "triple";

/** `tri-protocol-version` values we accept: 1, 1.x or 1.x.y. */
const PROTOCOL_VERSION = /^1(\.\d+){0,2}$/;

function checkProtocolVersion(h: HeaderMap, required: boolean): void {
  const v = firstHeader(h, H.triProtocolVersion);
  if (v === undefined) {
    if (!required) return;
    throw new RpcError(Code.InvalidArgument, 'missing required header: set tri-protocol-version to "1.0.0"', {
      legacyStatus: 40,
    });
  }
  if (!PROTOCOL_VERSION.test(v.trim())) {
    throw new RpcError(Code.InvalidArgument, `unsupported tri-protocol-version ${quote(v)}: this server speaks 1.x`, {
      legacyStatus: 40,
    });
  }
}

/** Triple HTTP unary calls are POSTs: 405 with `Allow: POST` for anything else. */
function methodNotAllowed(method: string): RpcError {
  return new RpcError(Code.Unimplemented, `HTTP method ${method} is not supported: use POST`, {
    httpStatus: 405,
    legacyStatus: 40,
    metadata: { allow: "POST" },
  });
}

/** The request's body codec and media type; 415 naming what we read when there is none. */
function requestCodecOf(h: HeaderMap): { codec: RequestCodec; mediaType: MediaType } {
  const ct = firstHeader(h, H.contentType);
  const mediaType = parseMediaType(ct);
  let codec = mediaType && requestCodecFor(mediaType.type);
  if (codec === protoRequestCodec) codec = tripleProtoRequestCodec;
  if (codec && mediaType) return { codec, mediaType };
  const supported = supportedRequestTypes().join(", ");
  throw unsupportedMediaType(ct ? `unsupported Content-Type ${quote(ct)}; supported: ${supported}` : `missing Content-Type; supported: ${supported}`);
}

/** The request's Content-Encoding; undefined for identity, 415 for one we do not read. */
function compressionOf(h: HeaderMap): Compression | undefined {
  const ce = firstHeader(h, H.contentEncoding);
  if (ce === undefined || ce === "" || ce.toLowerCase() === "identity") return undefined;
  const c = HTTP_COMPRESSIONS.get(ce.trim().toLowerCase());
  if (!c) throw unsupportedMediaType(`unsupported Content-Encoding ${quote(ce)}; supported: ${HTTP_ACCEPT_ENCODING}, identity`);
  return c;
}

/**
 * The Triple HTTP unary protocol: `POST /<interface>/<method>` over HTTP/1.1 or HTTP/2 with a
 * plain body (JSON, protobuf, form, multipart, text, XML). Checks the headers, answers what is
 * wrong with a JSON error body, and hands good calls to a {@link TripleUnaryCall}.
 */
class TripleHttpHandler implements ServerProtocolHandler {
  readonly name = TRIPLE;

  constructor(private readonly core: ServerCore) {}

  /** The last of the list: every request no other protocol claimed (REST routes included). */
  claims(): boolean {
    return true;
  }

  writeError(r: Responder, err: RpcError): void {
    sendTripleError(r, err, undefined, this.core.dubboJsErrors);
  }

  /** A call under way (an SSE stream) is reset; one not yet answered gets the error body. */
  cancel(_ctx: unknown, ex: Exchange, err: RpcError): void {
    sendTripleError(ex, err);
  }

  handle(ex: Exchange): void {
    let req: TripleRequest;
    try {
      req = this.check(ex);
    } catch (e) {
      this.core.refused(ex, TRIPLE, e);
      ex.discardBody((e as RpcError).httpStatus === 413);
      sendTripleError(ex, e, undefined, this.core.dubboJsErrors);
      return;
    }
    new TripleUnaryCall(this.core, ex, req);
  }

  /** Everything that can be refused before any byte of the body is read. */
  private check(ex: Exchange): TripleRequest {
    const rest = this.core.rest;
    if (rest !== undefined && (ex.method !== "POST" || !this.core.router.serves(ex.path))) {
      const match = rest.match(ex.method, ex.path, ex.headers);
      if (match) return checkRest(this.core, ex, match);
      if (ex.method !== "POST" && !this.core.router.serves(ex.path)) throw noRestRoute(ex.method, ex.path);
    }
    if (ex.method !== "POST") throw methodNotAllowed(ex.method);
    const h = ex.headers;
    const { limits } = this.core;
    if (ex.headerCount > limits.maxHeaderCount) throw tooManyHeaders(ex.headerCount, limits.maxHeaderCount);
    const route = this.core.router.resolve(ex.path, h);
    checkProtocolVersion(h, this.core.requireProtocolVersion);
    const { codec, mediaType } = requestCodecOf(h);
    const timeoutMs =
      parseTriTimeout(H.triServiceTimeout, firstHeader(h, H.triServiceTimeout)) ?? parseTriTimeout(H.restServiceTimeout, firstHeader(h, H.restServiceTimeout));
    const compression = compressionOf(h);
    const kind = route.descriptor.kind;
    if (kind === "client_streaming" || kind === "bidi_streaming") {
      throw new RpcError(
        Code.Unimplemented,
        `${route.descriptor.path} is ${kind.replace("_", "-")}: call it with gRPC over HTTP/2 (Content-Type application/grpc)`,
        { httpStatus: 505, legacyStatus: 40 },
      );
    }
    // Health keeps answering while draining: that is how probes learn we are NOT_SERVING.
    if (this.core.draining && route.service.name !== HEALTH_SERVICE_NAME) throw serverShuttingDown();
    const declared = firstHeader(h, H.contentLength);
    // A codec may read more than maxBodyBytes (multipart with streamed files spills them): its own bound.
    const max = codec.bodyLimit ? codec.bodyLimit(route.descriptor, limits) : limits.maxBodyBytes;
    if (!compression && declared !== undefined && Number(declared) > max) throw bodyTooLarge(max);
    return { route, codec, mediaType, timeoutMs, compression, rest: undefined };
  }
}

/** A request for a path neither REST routes nor RPC paths know. */
function noRestRoute(method: string, path: string): RpcError {
  return new RpcError(Code.Unimplemented, `no route for ${method} ${path}: no REST mapping matches it and it is not an RPC path`, {
    httpStatus: 404,
  });
}

const JSON_MEDIA_TYPE: MediaType = { type: "application/json", params: {} };

/**
 * The checks of a REST request (`@Get("/users/{id}")` …): as for RPC paths, except that the body
 * (and so its Content-Type) matters only when a parameter comes from it.
 */
function checkRest(core: ServerCore, ex: Exchange, match: RestMatch): TripleRequest {
  const h = ex.headers;
  const { limits } = core;
  if (ex.headerCount > limits.maxHeaderCount) throw tooManyHeaders(ex.headerCount, limits.maxHeaderCount);
  checkProtocolVersion(h, false);
  const hasBody = match.binder.body !== undefined;
  const { codec, mediaType } = hasBody ? requestCodecOf(h) : { codec: jsonRequestCodec, mediaType: JSON_MEDIA_TYPE };
  const timeoutMs =
    parseTriTimeout(H.triServiceTimeout, firstHeader(h, H.triServiceTimeout)) ?? parseTriTimeout(H.restServiceTimeout, firstHeader(h, H.restServiceTimeout));
  const compression = hasBody ? compressionOf(h) : undefined;
  if (core.draining) throw serverShuttingDown();
  const declared = firstHeader(h, H.contentLength);
  const body = match.binder.body;
  const max = body && codec.bodyLimit ? codec.bodyLimit(body, limits) : limits.maxBodyBytes;
  if (hasBody && !compression && declared !== undefined && Number(declared) > max) throw bodyTooLarge(max);
  return { route: match.route, codec, mediaType, timeoutMs, compression, rest: match };
}

/** Triple HTTP's server half (unary, GET, SSE, REST routes), the last of the server's protocol list. */
export const tripleServer: ServerProtocol = { name: TRIPLE, open: (core) => new TripleHttpHandler(core) };
