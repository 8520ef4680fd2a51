// Owns `unaryFormatOf`, `isConnectStreamType`, `streamFormatOf`, `connectHttpStatus`, … The format
// of a unary Content-Type (`application/json`, `application/proto`). Must not change: the Connect
// protocol's wire rules, as connect-es speaks them.
import { Code } from "../protocol/code.js";
import { type Compression, HTTP_COMPRESSIONS } from "../protocol/compression.js";
import { RpcError } from "../protocol/rpc-error.js";
import { type ConnectDialect, dialectErrorObject } from "../protocol/error-json.js";
import { quote } from "../protocol/wire-text.js";
import { CONNECT_FLAG_END_STREAM } from "./end-stream.js";

export { CH, CONNECT_ACCEPT_ENCODING, CONNECT_FLAG_END_STREAM, parseEndStream } from "./end-stream.js";

/**
 * The rules of the Connect protocol (connectrpc.com/docs/protocol) that both sides share:
 * header names, content types, code strings and HTTP statuses, the error JSON, the envelope
 * flags and the end-stream message (what a client reads is in end-stream.ts, re-exported here).
 */

/** How a Connect call's messages are encoded. */
export type ConnectFormat = "json" | "proto";

/** The format of a unary Content-Type (`application/json`, `application/proto`). */
export function unaryFormatOf(mediaType: string): ConnectFormat | undefined {
  if (mediaType === "application/json") return "json";
  if (mediaType === "application/proto") return "proto";
  return undefined;
}

/** True for `application/connect+…` (any case): the Content-Type of Connect streams. */
export function isConnectStreamType(contentType: unknown): boolean {
  // Runs on every request that is not gRPC: one character ("c" of "connect", any case) turns
  // away application/json and the like before the regular expression runs.
  return typeof contentType === "string" && contentType.length > 20 && (contentType.charCodeAt(12) | 0x20) === 0x63 && CONNECT_STREAM_PREFIX.test(contentType);
}

const CONNECT_STREAM_PREFIX = /^application\/connect\+/i;

/** The format of a streaming media type (`application/connect+json`, `+proto`). */
export function streamFormatOf(mediaType: string): ConnectFormat | undefined {
  if (mediaType === "application/connect+json") return "json";
  if (mediaType === "application/connect+proto") return "proto";
  return undefined;
}

/** Code → HTTP status of a unary Connect error (streams always answer 200). */
const CODE_TO_HTTP: readonly number[] = [200, 499, 500, 400, 504, 404, 409, 403, 429, 400, 409, 400, 501, 500, 503, 500, 401];

/**
 * HTTP statuses that say something about the request itself and keep their meaning in Connect:
 * 404 for a path nothing is registered under (a handler's own `unimplemented` is 501), 405, 415, 505.
 */
const KEPT_HTTP = new Set([404, 405, 415, 505]);

/** The HTTP status of a unary Connect error response. */
export function connectHttpStatus(err: RpcError): number {
  if (err.httpStatus !== undefined && KEPT_HTTP.has(err.httpStatus)) return err.httpStatus;
  return CODE_TO_HTTP[err.code] ?? 500;
}

/** The end-stream message: `{"error"?, "metadata"?}` (metadata: the trailers, each a list of values). */
function endStreamJson(err: RpcError | undefined, trailers: Record<string, unknown> | undefined, dialect: ConnectDialect = "connect"): string {
  const o: Record<string, unknown> = {};
  if (err) o.error = dialectErrorObject(err, dialect);
  let meta: Record<string, string[]> | undefined;
  const add = (src: Record<string, unknown>) => {
    for (const k in src) {
      const v = src[k];
      (meta ??= {})[k] = Array.isArray(v) ? v.map(String) : [String(v)];
    }
  };
  if (trailers) add(trailers);
  if (err) add(err.metadata);
  if (meta) o.metadata = meta;
  return JSON.stringify(o);
}

/** A whole end-stream frame. */
export function endStreamFrame(err: RpcError | undefined, trailers: Record<string, unknown> | undefined, dialect: ConnectDialect = "connect"): Buffer {
  const json = Buffer.from(endStreamJson(err, trailers, dialect), "utf8");
  const out = Buffer.allocUnsafe(5 + json.length);
  out[0] = CONNECT_FLAG_END_STREAM;
  out.writeUInt32BE(json.length, 1);
  json.copy(out, 5);
  return out;
}

/** `connect-timeout-ms`: at most 10 digits; a bad value is `invalid_argument`. */
export function parseConnectTimeout(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d{1,10}$/.test(v)) {
    throw new RpcError(Code.InvalidArgument, `protocol error: invalid connect-timeout-ms ${quote(v)}: expected 1 to 10 digits (milliseconds)`);
  }
  return Number(v);
}

/** A Content-Encoding (or `connect-content-encoding`, or GET `compression`); `unimplemented` naming ours for another. */
export function connectCompressionOf(name: string | undefined, header: string): Compression | undefined {
  if (name === undefined || name === "" || name.toLowerCase() === "identity") return undefined;
  const c = HTTP_COMPRESSIONS.get(name.trim().toLowerCase());
  if (c) return c;
  throw new RpcError(Code.Unimplemented, `unsupported ${header} ${quote(name)}; supported: gzip, br, deflate, identity`);
}
