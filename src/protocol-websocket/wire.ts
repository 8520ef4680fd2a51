// Owns `WS_CLOSE`, `WS_SUBPROTOCOL`, `WS_BEARER_PREFIX`, `WS_END_OF_REQUEST`, … Close codes (RFC
// 6455 §7.4.1). Must not change: the framing the web client and the server agree on; bounds on
// every frame.
import { Code, codeFromName, codeName } from "../protocol/code.js";
import { RpcError } from "../protocol/rpc-error.js";
import { boundMessage } from "../protocol/wire-text.js";
import type { GrpcMessageFormat } from "../message/codec-types.js";

/**
 * Triple over WebSocket, as Dubbo 3.3 carries it (apache/dubbo PR #14390): one WebSocket
 * connection is one call; the handshake's request URI is the call's path and its headers the
 * call's metadata; each binary or text message is one bare message (no gRPC 5-byte prefix); a
 * client close 1000 ends the request side, any other code cancels; the server closes 1000 when
 * the call succeeded, else 1011 with the error's message as the reason. docs/protocol.md has the
 * rules and their source.
 */

/** Close codes (RFC 6455 §7.4.1). */
export const WS_CLOSE = {
  normal: 1000,
  goingAway: 1001,
  policy: 1008,
  tooBig: 1009,
  internal: 1011,
} as const;

/** The subprotocol the server selects when the client offers it (browsers must be answered one). */
export const WS_SUBPROTOCOL = "triple";

/**
 * A subprotocol carrying a bearer token, `bearer.<token>`: a browser's WebSocket cannot set an
 * `authorization` header, and a token in the URL would land in proxies' logs. Never echoed.
 */
export const WS_BEARER_PREFIX = "bearer.";

/**
 * An empty text message ends the request side while the connection stays open for the answer
 * (our addition: after a close frame nothing more reaches a browser, so Dubbo's close 1000 cannot
 * end a client stream whose answer is still to come). JSON has no empty message, and protobuf
 * messages travel as binary messages, where an empty one is an empty message.
 */
export const WS_END_OF_REQUEST = "";

/** The largest close reason: 125 bytes of close payload less the 2-byte code. */
const MAX_REASON_BYTES = 123;

/** The message formats of WebSocket calls by media type; JSON unless the call says otherwise. */
const FORMATS: ReadonlyMap<string, GrpcMessageFormat> = new Map([
  ["application/json", "json"],
  ["application/proto", "proto"],
  ["application/protobuf", "proto"],
  ["application/x-protobuf", "proto"],
]);

/** The default media type of a WebSocket call's messages. */
export const WS_DEFAULT_CONTENT_TYPE = "application/json";

/** The message format of a media type (lower case, no parameters); undefined when unsupported. */
export function wsFormatOf(mediaType: string): GrpcMessageFormat | undefined {
  return FORMATS.get(mediaType);
}

/** The media types a WebSocket call may use, for error messages. */
export const WS_MEDIA_TYPES: readonly string[] = [...FORMATS.keys()];

/** The close code a call's error ends with: 1001 when the server shuts down, 1009 for a message too big, else 1011. */
export function closeCodeOf(err: RpcError): number {
  if (err.code === Code.Unavailable) return WS_CLOSE.goingAway;
  return WS_CLOSE.internal;
}

/**
 * The close reason of an error: `<code name>: <message>`, cut to the 123 bytes a close frame
 * holds. Dubbo sends the bare message; the code name in front lets our clients rebuild the code.
 */
export function closeReasonOf(err: RpcError): string {
  return boundMessage(`${codeName(err.code)}: ${err.message}`, MAX_REASON_BYTES);
}

/**
 * The error a server's close stands for, on the client: undefined for 1000, else an RpcError
 * with the code named in front of the reason (ours), or `unknown` with the whole reason (Dubbo's
 * bare message), `unavailable` for 1001 and `resource_exhausted` for 1009.
 */
export function errorOfClose(code: number, reason: string): RpcError | undefined {
  if (code === WS_CLOSE.normal) return undefined;
  const m = /^([a-z_]+): /.exec(reason);
  const named = m ? codeFromName(m[1]) : undefined;
  if (named !== undefined) return new RpcError(named, reason.slice(m![0].length));
  if (code === WS_CLOSE.goingAway) return new RpcError(Code.Unavailable, reason || "the server went away (close 1001)");
  if (code === WS_CLOSE.tooBig) return new RpcError(Code.ResourceExhausted, reason || "a message was too large (close 1009)");
  return new RpcError(Code.Unknown, reason || `the WebSocket closed with code ${code}`);
}

/** Header names a query parameter may not stand for: credentials, and what the handshake itself is. */
const NOT_FROM_QUERY: ReadonlySet<string> = new Set(["authorization", "cookie", "host", "origin", "upgrade", "connection"]);

/**
 * The call's metadata from the handshake: its headers, and the query parameters for the names
 * no header gave (a browser's WebSocket sends no headers of its own: `?tri-service-timeout=5000`,
 * `?content-type=application/proto`, `?x-tenant=a`). Credentials never come from the query;
 * `sec-websocket-*` and the listed handshake headers are not metadata. Throws on more than
 * `maxCount` fields.
 */
export function handshakeMetadata(
  headers: Readonly<Record<string, string | string[] | undefined>>,
  query: string | undefined,
): Record<string, string | string[] | undefined> {
  const out: Record<string, string | string[] | undefined> = { ...headers };
  if (query === undefined || query === "") return out;
  for (const [k, v] of new URLSearchParams(query)) {
    const name = k.toLowerCase();
    if (NOT_FROM_QUERY.has(name) || name.startsWith("sec-") || name.startsWith(":") || out[name] !== undefined) continue;
    out[name] = v;
  }
  return out;
}

/** The bearer token a client offered as a `bearer.<token>` subprotocol, if any. */
export function bearerOfProtocols(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  for (const p of header.split(",")) {
    const t = p.trim();
    if (t.startsWith(WS_BEARER_PREFIX) && t.length > WS_BEARER_PREFIX.length) return t.slice(WS_BEARER_PREFIX.length);
  }
  return undefined;
}
