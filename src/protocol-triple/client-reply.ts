// Owns `tripleReplyBody`. The body of a Triple HTTP unary reply, decompressed, once it is sure to
// be a success: a `grpc-status` header or trailer decides the outcome when present (a gRPC-only
// server answers `200` with `grpc-status: 2`). Must not change: Triple's wire rules as Dubbo Java
// speaks them (tri-* headers, the HTTP unary and stream forms).
import { Code } from "../protocol/code.js";
import { errorFromHttpResponse } from "../protocol/error-reply.js";
import { HTTP_COMPRESSIONS } from "../protocol/compression.js";
import { firstHeader, H, type HeaderMap, metadataOf } from "../protocol/headers.js";
import { RpcError } from "../protocol/rpc-error.js";
import { codeFromHttpStatus } from "../protocol/status-table.js";
import type { HttpReply } from "../transport/client/unary-transport.js";
import { errorFromGrpcTrailers } from "../protocol-grpc/status.js";
import { parseMediaType } from "../protocol/content-type.js";

/** Response media types a Triple HTTP request of each media type may be answered with. */
const ANSWERS: Readonly<Record<string, readonly string[]>> = {
  "application/json": ["application/json", "text/json"],
  "application/proto": ["application/proto", "application/x-protobuf", "application/protobuf"],
};

/**
 * The body of a Triple HTTP unary reply, decompressed, once it is sure to be a success: a
 * `grpc-status` header or trailer decides the outcome when present (a gRPC-only server answers
 * `200` with `grpc-status: 2`); a non-200 reply is thrown as the RpcError its body describes; a
 * 200 reply in a content type the request cannot be answered with is an error naming it.
 */
export function tripleReplyBody(reply: HttpReply, maxBytes: number, requestType: string, fromHttp: (status: number) => Code = codeFromHttpStatus): Buffer {
  const inTrailers = reply.trailers !== undefined && firstHeader(reply.trailers, H.grpcStatus) !== undefined;
  if (inTrailers || firstHeader(reply.headers, H.grpcStatus) !== undefined) {
    const err = errorFromGrpcTrailers({ ...reply.headers, ...reply.trailers });
    if (err) throw isGrpcType(reply.headers) ? withGrpcOnlyHint(err) : err;
  }
  const body = decompressed(reply, maxBytes);
  if (reply.status !== 200) {
    const err = errorFromHttpResponse(reply.status, reply.headers, body, fromHttp);
    throw refusedAsGrpcOnly(reply, body) ? withGrpcOnlyHint(err) : err;
  }
  const ct = firstHeader(reply.headers, H.contentType);
  const type = parseMediaType(ct)?.type;
  const expected = ANSWERS[requestType] ?? [requestType];
  if (type === undefined || !expected.includes(type)) {
    const grpc = type?.startsWith("application/grpc") ? `: ${GRPC_ONLY_HINT}` : "";
    throw new RpcError(
      Code.Internal,
      `the response has Content-Type ${ct === undefined ? "(none)" : `"${ct}"`} where ${expected.join(" or ")} was expected${grpc}`,
      { metadata: metadataOf(reply.headers), httpStatus: reply.status },
    );
  }
  return body;
}

const GRPC_ONLY_HINT = 'the provider answers gRPC only, so call it with protocol: "grpc"';

/** True when a reply is in one of gRPC's content types (`application/grpc`, `+proto`, `+json` …). */
function isGrpcType(headers: HeaderMap): boolean {
  return firstHeader(headers, H.contentType)?.startsWith("application/grpc") === true;
}

/**
 * A non-gRPC request refused the way gRPC-only servers refuse it: `415` in a gRPC content type
 * (grpc-go), or `415` with neither a content type nor a body (grpc-js). A Triple or Connect
 * server says why in a body.
 */
function refusedAsGrpcOnly(reply: HttpReply, body: Buffer): boolean {
  if (reply.status !== 415) return false;
  return isGrpcType(reply.headers) || (body.length === 0 && firstHeader(reply.headers, H.contentType) === undefined);
}

/**
 * The error of a reply from a server that answers gRPC only (a gRPC status to a Triple request,
 * e.g. grpcio's `Missing :te header`, or a bare 415), with the fix in its message.
 */
function withGrpcOnlyHint(err: RpcError): RpcError {
  const { metadata, httpStatus, legacyStatus, details } = err;
  return new RpcError(err.code, `${err.message} (${GRPC_ONLY_HINT})`, { metadata, httpStatus, legacyStatus, details, rawMessage: err.rawMessage });
}

function decompressed(reply: HttpReply, maxBytes: number): Buffer {
  let body = reply.body;
  const ce = reply.headers[H.contentEncoding];
  if (ce !== undefined && ce !== "identity" && body.length > 0) {
    const c = HTTP_COMPRESSIONS.get(String(ce).toLowerCase());
    if (!c) throw new RpcError(Code.Internal, `the response uses unsupported Content-Encoding "${ce}"`);
    body = c.decompress(body, maxBytes);
  }
  return body;
}

export { errorFromHttpResponse };
