import { Code, codeFromName, isCode } from "../protocol/code.js";
import { HTTP_COMPRESSIONS } from "../protocol/compression.js";
import { firstHeader, H, type HeaderMap, metadataOf } from "../protocol/headers.js";
import { type ErrorDetail, RpcError } from "../protocol/rpc-error.js";
import { codeFromHttpStatus, codeFromLegacyStatus } from "../protocol/status-table.js";
import type { HttpReply } from "../transport/client/unary-transport.js";
import { errorFromGrpcTrailers } from "../protocol-grpc/status.js";
import { parseMediaType } from "../protocol/content-type.js";

/** The Dubbo legacy statuses an error body's `status` may carry. */
const LEGACY_STATUSES = new Set([20, 25, 30, 31, 35, 40, 50, 60, 70, 80, 90]);

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

function parseBody(body: Buffer): { parsed: unknown; text: string } {
  if (body.length === 0) return { parsed: undefined, text: "" };
  try {
    return { parsed: JSON.parse(body.toString("utf8")), text: "" };
  } catch {
    // not JSON: a proxy's HTML page or plain text; keep a short excerpt as the message
    return { parsed: undefined, text: body.toString("utf8", 0, Math.min(body.length, 512)).trim() };
  }
}

/**
 * The code an error body names, in any of the dialects: our `code` name, dubbo-go's `code`
 * number, Dubbo Java's `status` as an HTTP status string, dubbo-js's `status` as a gRPC code, a
 * legacy Dubbo status (trusted only where the HTTP status says nothing, since 70 covers several
 * codes). `fromHttp` is the code the HTTP status alone gives.
 */
function codeOfBody(b: Record<string, unknown>, fromHttp: Code, legacyStatus: number | undefined): Code {
  const named = typeof b.code === "string" ? codeFromName(b.code) : isCode(b.code) ? b.code : undefined;
  const s = b.status;
  if (named !== undefined) return named;
  if (typeof s === "string" && /^\d{3}$/.test(s)) return codeFromHttpStatus(Number(s));
  if (typeof s === "number" && legacyStatus === undefined && isCode(s)) return s;
  if (typeof s === "number" && legacyStatus !== undefined && fromHttp === Code.Unknown) {
    return codeFromLegacyStatus(s) ?? fromHttp;
  }
  return fromHttp;
}

/**
 * Turns a non-200 Triple HTTP response into an RpcError. Reads our body (`{status, message,
 * code}`) and the other dialects of the Dubbo world: `status` as an HTTP status string (Dubbo
 * Java), `status` as a gRPC code number (dubbo-js), `code` alone (dubbo-go). Without a usable
 * body the HTTP status decides (400 invalid_argument, 401 unauthenticated, 403
 * permission_denied, 404 unimplemented, 408 deadline_exceeded, 409 aborted, 412
 * failed_precondition, 413/431 resource_exhausted, 415 internal, 429/502/503/504 unavailable,
 * anything else unknown).
 */
export function errorFromHttpResponse(
  status: number,
  headers: HeaderMap,
  body: Buffer,
  /** The code of a status without a usable body: Triple's table, or gRPC's for Connect replies. */
  fromHttp: (status: number) => Code = codeFromHttpStatus,
): RpcError {
  let code = fromHttp(status);
  let legacyStatus: number | undefined;
  const { parsed, text } = parseBody(body);
  let message = text;
  let details: ErrorDetail[] = [];
  if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) {
    const b = parsed as Record<string, unknown>;
    if (typeof b.message === "string") message = b.message;
    if (typeof b.status === "number" && LEGACY_STATUSES.has(b.status)) legacyStatus = b.status;
    code = codeOfBody(b, code, legacyStatus);
    details = detailsOf(b.details);
  } else if (typeof parsed === "string") {
    message = parsed;
  }
  if (!message) message = `HTTP status ${status}`;
  return new RpcError(code, message, { metadata: metadataOf(headers), httpStatus: status, legacyStatus, details });
}

/** Error details as Connect, dubbo-js and our Triple body write them: `[{type, value: base64}]`; malformed ones are dropped. */
function detailsOf(v: unknown): ErrorDetail[] {
  if (!Array.isArray(v)) return [];
  const out: ErrorDetail[] = [];
  for (const d of v as Record<string, unknown>[]) {
    if (d && typeof d.type === "string" && typeof d.value === "string" && /^[A-Za-z0-9+/_-]*={0,2}$/.test(d.value)) {
      out.push({ type: d.type, value: Buffer.from(d.value, "base64") });
    }
  }
  return out;
}
