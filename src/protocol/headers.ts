// Owns `H`, `TRI_PROTOCOL_VERSION`, `RESERVED_HEADERS`, `firstHeader`, … Header names of the Triple
// protocol and of gRPC, lower-case as they appear on HTTP/2. Must not change: the code and status
// tables and error shapes every protocol shares.
import { base64Decode } from "./bytes.js";

/** Header names of the Triple protocol and of gRPC, lower-case as they appear on HTTP/2. */
export const H = {
  contentType: "content-type",
  contentEncoding: "content-encoding",
  contentLength: "content-length",
  acceptEncoding: "accept-encoding",
  accept: "accept",
  authorization: "authorization",
  triProtocolVersion: "tri-protocol-version",
  triServiceVersion: "tri-service-version",
  triServiceGroup: "tri-service-group",
  triServiceTimeout: "tri-service-timeout",
  restServiceTimeout: "rest-service-timeout",
  grpcTimeout: "grpc-timeout",
  grpcEncoding: "grpc-encoding",
  grpcAcceptEncoding: "grpc-accept-encoding",
  grpcStatus: "grpc-status",
  grpcMessage: "grpc-message",
  grpcStatusDetailsBin: "grpc-status-details-bin",
  te: "te",
  userAgent: "user-agent",
  /** Dubbo Java's: set (not 0) on a response whose message is a serialized Java exception. */
  triExceptionCode: "tri-exception-code",
} as const;

/** The protocol version our clients send; the server accepts any 1 or 1.x.y. */
export const TRI_PROTOCOL_VERSION = "1.0.0";

/** Headers that describe the transport or protocol and are not call metadata. */
export const RESERVED_HEADERS: ReadonlySet<string> = new Set([
  "content-type",
  "content-length",
  "content-encoding",
  "accept-encoding",
  "accept",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "host",
  "te",
  "upgrade",
  "grpc-timeout",
  "grpc-encoding",
  "grpc-accept-encoding",
  "grpc-status",
  "grpc-message",
  "grpc-status-details-bin",
  "tri-protocol-version",
  "tri-service-version",
  "tri-service-group",
  "tri-service-timeout",
  "rest-service-timeout",
]);

/** Request or response headers as node gives them: lower-case names. */
export type HeaderMap = Readonly<Record<string, string | string[] | number | undefined>>;

/** The first value of a header (node joins most repeated headers, but not all), as a string. */
export function firstHeader(h: HeaderMap, name: string): string | undefined {
  const v = h[name];
  if (v === undefined) return undefined;
  return Array.isArray(v) ? v[0] : typeof v === "string" ? v : String(v);
}

/** A metadata value as callers receive it: text, repeated text, or the bytes of a `-bin` entry. */
export type MetadataValue = string | string[] | Uint8Array;

/** Unary trailers travel as headers with this prefix on HTTP unary calls (the Connect and dubbo-js way). */
export const TRAILER_PREFIX = "trailer-";

/**
 * Trailing metadata as callers receive it: from gRPC trailers (`prefix` empty), or from the
 * `trailer-` headers of an HTTP unary response (the prefix stripped). `-bin` entries are decoded
 * from base64 into bytes; protocol headers are left out.
 */
export function trailersOf(headers: HeaderMap | undefined, prefix = ""): Record<string, MetadataValue> {
  const out: Record<string, MetadataValue> = {};
  if (!headers) return out;
  for (const k of Object.keys(headers)) {
    if (prefix && !k.startsWith(prefix)) continue;
    const name = k.slice(prefix.length);
    const v = headers[k];
    if (v === undefined || name.startsWith(":") || RESERVED_HEADERS.has(name)) continue;
    if (name.endsWith("-bin")) out[name] = base64Decode(String(Array.isArray(v) ? v[0] : v));
    else out[name] = Array.isArray(v) ? v : String(v);
  }
  return out;
}

/** Custom metadata of a response: protocol, pseudo, length and date headers left out. */
export function metadataOf(headers: HeaderMap | undefined): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  if (!headers) return out;
  for (const k of Object.keys(headers)) {
    const v = headers[k];
    if (v === undefined || k.startsWith(":") || RESERVED_HEADERS.has(k) || k.startsWith(TRAILER_PREFIX)) continue;
    if (k === "content-length" || k === "date") continue;
    out[k] = Array.isArray(v) ? v : String(v);
  }
  return out;
}
